"""Logging torchtally metrics from Lightning: the two idioms.

1. In the LightningModule, as with torchmetrics: ``self.val_acc(logits, y)`` (forward: the
   batch's value, the batch accumulated) and ``self.log("val_acc", self.val_acc)``; a
   MetricCollection with ``self.log_dict(collection)``. Lightning logs the batch value with
   ``on_step=True``, the epoch value (``compute()``, synced across ranks: no ``sync_dist``
   needed) with ``on_epoch=True``, and resets the metrics after the epoch. Under DDP,
   Lightning's DistributedSampler pads the validation set with repeated samples, and this idiom
   counts them (as torchmetrics does); it is exact on one device, when the set divides evenly,
   or with ``torchtally.UnpaddedDistributedSampler`` in the validation loader.
2. ``torchtally.adapters.lightning.MetricCallback``: the callback updates the metrics from
   each step's output, drops the sampler's padding, syncs once per epoch and logs
   ``val_<name>``: exact under DDP with Lightning's own sampler.

Run: ``python examples/lightning_logging.py`` (CPU, a few seconds). Both idioms log the same
values here (one device, nothing padded); the script checks that and prints them.
"""

import warnings

import lightning.pytorch as pl
import torch
from torch.utils.data import DataLoader, TensorDataset

from torchtally import MetricCollection
from torchtally.adapters.lightning import MetricCallback
from torchtally.classification import MulticlassAccuracy, MulticlassF1Score


class Classifier(pl.LightningModule):
    def __init__(self) -> None:
        super().__init__()
        self.layer = torch.nn.Linear(8, 3)
        # Idiom 1: the metrics are attributes, so submodules (torchtally metrics are
        # nn.Modules): they follow the model's device and stay out of its checkpoint unless
        # made persistent; Lightning finds the attribute of each metric logged.
        self.val_acc = MulticlassAccuracy(num_classes=3)
        self.val_metrics = MetricCollection({"f1": MulticlassF1Score(num_classes=3)}, prefix="val_")

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.layer(x)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return torch.nn.functional.cross_entropy(self(x), y)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        logits = self(x)
        self.val_acc(logits, y)  # idiom 1: forward gives the batch value and accumulates the batch
        self.log("val_acc", self.val_acc)  # validation's default: on_epoch=True (the value over the epoch)
        self.val_metrics(logits, y)
        self.log_dict(self.val_metrics)  # val_f1
        return logits, y  # what the MetricCallback of idiom 2 reads

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.5)


def loaders():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(300, 8, generator=g)
    y = (x[:, :3] * torch.tensor([2.0, -1.0, 0.5])).argmax(1)
    data = TensorDataset(x, y)
    return DataLoader(data, batch_size=32, shuffle=True, generator=g), DataLoader(data, batch_size=50)


def main():
    """Train for 3 epochs; returns (the logged validation values, the model, the val loader)."""
    # Idiom 2: a callback holding the metrics; it logs val_callback_acc and val_callback_f1.
    callback = MetricCallback(
        {"callback_acc": MulticlassAccuracy(num_classes=3), "callback_f1": MulticlassF1Score(num_classes=3)},
        output_transform=lambda outputs, batch: outputs,
    )
    trainer = pl.Trainer(
        accelerator="cpu",
        devices=1,
        max_epochs=3,
        logger=False,
        enable_progress_bar=False,
        enable_checkpointing=False,
        enable_model_summary=False,
        callbacks=[callback],
        num_sanity_val_steps=0,
    )
    model, (train_loader, val_loader) = Classifier(), loaders()
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", module="lightning")
        trainer.fit(model, train_loader, val_loader)
    logged = {k: float(v) for k, v in trainer.callback_metrics.items() if k.startswith("val_")}
    assert abs(logged["val_acc"] - logged["val_callback_acc"]) < 1e-6, logged
    assert abs(logged["val_f1"] - logged["val_callback_f1"]) < 1e-6, logged
    return logged, model, val_loader


if __name__ == "__main__":
    for name, value in sorted(main()[0].items()):
        print(f"{name:20s} {value:.4f}")
