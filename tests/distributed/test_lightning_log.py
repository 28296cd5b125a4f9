"""``self.log("val_acc", metric)`` and ``self.log_dict(collection)`` with torchtally's metrics
under Lightning's DDP strategy, 2 gloo processes: each step logs the value of that rank's batch
(forward's), each epoch the value over both ranks' data on both ranks (compute() syncs; no
``sync_dist``); the metrics are reset between runs. The validation loader holds an
UnpaddedDistributedSampler over an uneven dataset, so the epoch values equal scikit-learn's
over the whole dataset; with Lightning's own padding sampler they equal torchmetrics' logged the
same way (both count the padding duplicate).
"""

import os
import warnings

import pytest
import torch
from sklearn.metrics import accuracy_score, f1_score, recall_score
from torch.utils.data import DataLoader, TensorDataset

from torchtally.testing import run_distributed

pytestmark = pytest.mark.distributed

N, BATCH = 37, 4  # uneven: rank 0 holds 19 samples, rank 1 18; 5 batches each


def _data():
    g = torch.Generator().manual_seed(11)
    x = torch.randn(N, 4, generator=g)
    return TensorDataset(x, (x[:, :3] * torch.tensor([1.0, -1.0, 0.5])).argmax(1))


def _ddp_logging(rank, world_size):
    import lightning.pytorch as pl
    import torchmetrics
    import torchmetrics.classification as tmc

    from torchtally import MetricCollection, UnpaddedDistributedSampler
    from torchtally.classification import MulticlassAccuracy, MulticlassF1Score

    os.environ["LOCAL_RANK"] = str(rank)  # the group exists: Lightning's "ddp" runs in place
    os.environ["NODE_RANK"] = "0"

    class Steps(pl.loggers.Logger):
        name, version = "steps", 0

        def __init__(self):
            super().__init__()
            self.rows = []

        def log_metrics(self, metrics, step=None):  # on every rank (no rank_zero_only here)
            self.rows.append({k: float(v) for k, v in metrics.items()})

        def log_hyperparams(self, *args, **kwargs):
            pass

    class Model(pl.LightningModule):
        def __init__(self):
            super().__init__()
            self.layer = torch.nn.Linear(4, 3)
            self.acc = MulticlassAccuracy(num_classes=3, average="micro")
            self.coll = MetricCollection(
                {"acc": MulticlassAccuracy(num_classes=3), "f1": MulticlassF1Score(num_classes=3)}, prefix="val_"
            )
            self.tm_acc = tmc.MulticlassAccuracy(num_classes=3, average="micro")
            self.tm_coll = torchmetrics.MetricCollection(
                {"acc": tmc.MulticlassAccuracy(num_classes=3), "f1": tmc.MulticlassF1Score(num_classes=3)},
                prefix="tm_val_",
            )

        def validation_step(self, batch, batch_idx):
            x, y = batch
            logits = self.layer(x)
            self.acc(logits, y)
            self.log("acc", self.acc, on_step=True, on_epoch=True, sync_dist=True)  # ignored for a metric object
            self.coll(logits, y)
            self.log_dict(self.coll)  # validation's default: on_epoch only
            self.tm_acc(logits, y)
            self.log("tm_acc", self.tm_acc, on_step=True, on_epoch=True)
            self.tm_coll(logits, y)
            self.log_dict(self.tm_coll)

    ds = _data()
    steps = Steps()
    trainer = pl.Trainer(
        accelerator="cpu",
        devices=world_size,
        strategy="ddp",
        logger=steps,
        enable_progress_bar=False,
        enable_checkpointing=False,
        enable_model_summary=False,
    )
    torch.manual_seed(5)  # one model, chosen so that the flip changes the accuracy (a random one may not)
    model = Model()
    sampler = UnpaddedDistributedSampler(ds, shuffle=False)
    out = {"shard": list(sampler), "runs": []}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Lightning's notes about few workers
        for flip in (False, True, None):  # None: Lightning's own (padding) DistributedSampler
            if flip:
                with torch.no_grad():
                    model.layer.weight.neg_()  # other predictions: a metric not reset would mix both runs
            loader = DataLoader(ds, batch_size=BATCH, sampler=sampler if flip is not None else None)
            steps.rows.clear()
            trainer.validate(model, loader, verbose=False)
            with torch.no_grad():
                preds = model.layer(ds.tensors[0]).argmax(1)
            logged = {k: v.item() for k, v in trainer.callback_metrics.items()}
            step_values = [r["acc_step"] for r in steps.rows if "acc_step" in r]
            out["runs"].append((preds.tolist(), logged, step_values))
    return out


def test_self_log_under_ddp_steps_are_the_ranks_batches_epochs_are_the_whole_dataset():
    results = run_distributed(_ddp_logging, 2, timeout=300)
    y = _data().tensors[1].numpy()
    for rank, result in enumerate(results):
        shard = result["shard"]
        assert sorted(shard + results[1 - rank]["shard"]) == list(range(N))  # uneven: 19 + 18
        for run, (preds, logged, step_values) in enumerate(result["runs"]):
            assert preds == results[0]["runs"][run][0]  # one model on both ranks
            if run == 2:  # Lightning's padding sampler: as torchmetrics, duplicate included
                for key in ("acc", "val_acc", "val_f1"):
                    assert logged[key] == pytest.approx(logged[f"tm_{key}"], abs=1e-6), (rank, key, logged)
                continue
            where = f"rank {rank}, run {run}"
            assert logged["acc"] == pytest.approx(accuracy_score(y, preds), abs=1e-6), where
            assert logged["acc_epoch"] == logged["acc"]
            # MulticlassAccuracy's default average="macro": the mean of the per-class recalls
            assert logged["val_acc"] == pytest.approx(recall_score(y, preds, average="macro"), abs=1e-6), where
            assert logged["val_f1"] == pytest.approx(f1_score(y, preds, average="macro"), abs=1e-6), where
            hits = [preds[i] == y[i] for i in shard]
            batches = [sum(hits[i : i + BATCH]) / len(hits[i : i + BATCH]) for i in range(0, len(hits), BATCH)]
            assert step_values == pytest.approx(batches, abs=1e-6), where  # this rank's batches, unsynced
        assert result["runs"][0][1]["acc"] != result["runs"][1][1]["acc"]  # the flip changed the value
