"""MetricCallback on a real Lightning Trainer in one process: stages, sanity check, logging,
several loaders, and padding found through Lightning's loops (ranks simulated with
DistributedSampler(num_replicas=W, rank=r), which Lightning keeps on a single device)."""

import warnings

import lightning.pytorch as pl
import pytest
import torch
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

from torchtally import Metric
from torchtally.adapters.lightning import MetricCallback


class Seen(Metric):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.add_state("ids", torch.empty(0, dtype=torch.int64), reduce="cat")

    def update(self, preds, ids):
        self.append_state("ids", ids)

    def compute(self):
        return self.ids.clone()


class Correct(Metric):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.add_state("counts", torch.zeros(2, dtype=torch.int64), reduce="sum")

    def update(self, preds, target):
        self.counts = self.counts + torch.stack([(preds.argmax(1) == target).sum(), torch.tensor(len(target))])

    def compute(self):
        return {"correct": self.counts[0], "accuracy": self.counts[0] / self.counts[1]}


class Model(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.layer = torch.nn.Linear(4, 3)

    def training_step(self, batch, batch_idx):
        x, y, _ = batch
        loss = torch.nn.functional.cross_entropy(self.layer(x), y)
        return {"loss": loss, "y_pred": self.layer(x).detach(), "y": y}

    def validation_step(self, batch, batch_idx, dataloader_idx=0):
        x, y, ids = batch
        return self.layer(x), y, ids

    def test_step(self, batch, batch_idx):
        x, y, ids = batch
        return self.layer(x), y, ids

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


def data(n):
    g = torch.Generator().manual_seed(n)
    return TensorDataset(torch.randn(n, 4, generator=g), torch.randint(0, 3, (n,), generator=g), torch.arange(n))


def trainer(callbacks, **kwargs):
    return pl.Trainer(
        accelerator="cpu",
        devices=1,
        logger=False,
        enable_progress_bar=False,
        enable_checkpointing=False,
        enable_model_summary=False,
        callbacks=callbacks,
        **kwargs,
    )


@pytest.fixture(autouse=True)
def quiet():
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", module="lightning")
        yield


def test_validation_in_fit_logs_exact_scalars_and_ignores_the_sanity_check():
    ds = data(23)
    callback = MetricCallback({"acc": Correct()}, output_transform=lambda out, batch: (out[0], out[1]))
    seen = MetricCallback(Seen(), output_transform=lambda out, batch: (out[0], out[2]))
    model = Model()
    t = trainer([callback, seen], max_epochs=2, num_sanity_val_steps=2)
    t.fit(model, DataLoader(ds, batch_size=5), DataLoader(ds, batch_size=4))
    assert sorted(seen.result.tolist()) == list(range(23))  # not the sanity check's 8
    x, y, _ = ds.tensors
    with torch.no_grad():
        correct = int((model.layer(x).argmax(1) == y).sum())
    assert callback.result["correct"].item() == correct  # a dict result is flattened (torchmetrics)
    assert t.callback_metrics["val_correct"].item() == correct
    assert t.callback_metrics["val_accuracy"].item() == pytest.approx(correct / 23)
    assert "val_metric" not in t.callback_metrics  # the Seen vector is not loggable


def test_simulated_ranks_each_drop_their_padding_in_validate_and_test():
    n, w = 10, 4
    ds = data(n)
    model = Model()
    for stage in ("validate", "test"):
        seen = []
        for r in range(w):
            callback = MetricCallback(Seen(), stage=stage, output_transform=lambda out, batch: (out[0], out[2]))
            t = trainer([callback])
            loader = DataLoader(ds, batch_size=2, sampler=DistributedSampler(ds, num_replicas=w, rank=r))
            getattr(t, stage)(model, loader, verbose=False)
            assert isinstance(
                t.val_dataloaders.sampler if stage == "validate" else t.test_dataloaders.sampler, DistributedSampler
            )
            seen += callback.result.tolist()
        assert sorted(seen) == list(range(n)), stage


def test_several_validation_loaders_accumulate_each_without_padding():
    a, b = data(5), data(7)
    callback = MetricCallback(Seen(), output_transform=lambda out, batch: (out[0], out[2]))
    loaders = [
        DataLoader(a, batch_size=2, sampler=DistributedSampler(a, num_replicas=2, rank=1)),  # 1, 3, pad
        DataLoader(b, batch_size=3, sampler=DistributedSampler(b, num_replicas=2, rank=1, shuffle=False)),
    ]
    trainer([callback]).validate(Model(), loaders, verbose=False)
    expected = list(loaders[0].sampler)[:2] + [1, 3, 5]
    assert sorted(callback.result.tolist()) == sorted(expected)


def test_train_stage_reads_the_training_step_dict():
    ds = data(9)
    callback = MetricCallback({"acc": Correct()}, stage="train")
    t = trainer([callback], max_epochs=1)
    t.fit(Model(), DataLoader(ds, batch_size=4))
    assert callback.result["correct"] <= 9 and "train_accuracy" in t.callback_metrics
    # the ignite-style dict was used: 9 samples counted
    assert callback.hook.metrics["acc"].counts[1].item() == 9


def test_a_step_returning_none_needs_an_output_transform():
    class NoOutput(Model):
        def validation_step(self, batch, batch_idx):
            return None

    callback = MetricCallback(Seen())
    with pytest.raises(ValueError, match="output_transform"):
        trainer([callback]).validate(NoOutput(), DataLoader(data(4), batch_size=2), verbose=False)


def test_bad_arguments():
    with pytest.raises(ValueError, match="stage"):
        MetricCallback(Seen(), stage="predict")
    with pytest.raises(TypeError, match="output_transform"):
        MetricCallback(Seen(), output_transform="x")
