"""The adapters inside the real frameworks' distributed launchers, on 2 gloo processes:
Lightning's DDP strategy (fit's validation, trainer.validate, trainer.test) and ignite's
``idist.Parallel`` with ``idist.auto_dataloader``. Lightning and ignite both give validation a
padding DistributedSampler; every rank's synced result must equal scikit-learn's.
"""

import os
import warnings

import pytest
import torch
import torch.nn.functional as F
from support.engine_helpers import C, check_against_sklearn, make_dataset, make_metrics, per_sample_loss
from torch.utils.data import DataLoader

from torchtally.testing import run_distributed

pytestmark = pytest.mark.distributed

N = 37  # not divisible by 2: rank 1 gets a padding duplicate


def _lightning_ddp(rank, world_size):
    import lightning.pytorch as pl

    from torchtally.adapters.hook import MetricHook
    from torchtally.adapters.lightning import MetricCallback
    from torchtally.adapters.sampler import SamplerWarning

    # The process group exists already; LOCAL_RANK tells Lightning the processes were
    # launched externally (as torchrun would), so its "ddp" strategy runs in place.
    os.environ["LOCAL_RANK"] = str(rank)
    os.environ["NODE_RANK"] = "0"

    class Model(pl.LightningModule):
        def __init__(self):
            super().__init__()
            self.layer = torch.nn.Linear(C, C, dtype=torch.float64)

        def training_step(self, batch, batch_idx):
            x, y = batch
            return F.nll_loss(self.layer(x).log_softmax(dim=1), y)

        def validation_step(self, batch, batch_idx):
            return {"y_pred": batch[0], "y": batch[1]}  # ignite-style dict, scores = the inputs

        def test_step(self, batch, batch_idx):
            return batch[0] * 2, batch[1]

        def configure_optimizers(self):
            return torch.optim.SGD(self.parameters(), lr=0.1)

    ds = make_dataset(N, seed=5)
    val = MetricCallback(make_metrics())
    test = MetricCallback(make_metrics(), stage="test", output_transform=lambda out, batch: (out[0] / 2, out[1]))
    trainer = pl.Trainer(
        accelerator="cpu",
        devices=world_size,
        strategy="ddp",
        max_epochs=2,
        logger=False,
        enable_progress_bar=False,
        enable_checkpointing=False,
        enable_model_summary=False,
        num_sanity_val_steps=1,
        callbacks=[val, test],
    )
    model = Model()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Lightning's notes about few workers, batch sizes
        trainer.fit(model, DataLoader(ds, batch_size=4), DataLoader(ds, batch_size=5))
    sampler = trainer.val_dataloaders.sampler
    assert type(sampler).__name__ == "DistributedSampler" and sampler.total_size == N + 1
    check_against_sklearn(val.result, None, ds, f"Lightning fit, rank {rank}")
    logged = {k: v.item() for k, v in trainer.callback_metrics.items() if k.startswith("val_")}
    # scalars are logged as computed (synced); the matrix and the row table are only in .result
    assert logged == {f"val_{k}": float(val.result[k]) for k in ("accuracy", "f1", "auroc")}, logged

    small = make_dataset(world_size - 1, seed=9)  # N < W: rank 1 holds nothing but a duplicate
    trainer.validate(model, DataLoader(small, batch_size=2), verbose=False)
    check_against_sklearn(val.result, None, small, f"Lightning validate N<W, rank {rank}")
    trainer.test(model, DataLoader(ds, batch_size=3), verbose=False)
    check_against_sklearn(test.result, None, ds, f"Lightning test, rank {rank}")

    # a loader without a DistributedSampler in a distributed run gets a warning
    hook = MetricHook(make_metrics())
    with pytest.warns(SamplerWarning, match="no DistributedSampler"):
        hook.start_epoch(DataLoader(ds, batch_size=4))
    return val.result["confmat"].tolist()


def test_lightning_ddp_validation_is_exact():
    results = run_distributed(_lightning_ddp, 2, timeout=240)
    assert results[0] == results[1]


def _scalar_logging(rank, world_size):
    import lightning.pytorch as pl

    from torchtally import MeanMetric
    from torchtally.adapters.lightning import MetricCallback

    os.environ["LOCAL_RANK"] = str(rank)
    os.environ["NODE_RANK"] = "0"

    class Model(pl.LightningModule):
        def __init__(self):
            super().__init__()
            self.layer = torch.nn.Linear(C, C, dtype=torch.float64)

        def validation_step(self, batch, batch_idx):
            return batch[0][:, 0]

    ds = make_dataset(N, seed=3)
    callback = MetricCallback({"mean": MeanMetric()})
    trainer = pl.Trainer(
        accelerator="cpu",
        devices=world_size,
        strategy="ddp",
        logger=False,
        enable_progress_bar=False,
        enable_checkpointing=False,
        enable_model_summary=False,
        callbacks=[callback],
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        trainer.validate(Model(), DataLoader(ds, batch_size=4), verbose=False)
    hints = [str(w.message) for w in caught if "sync_dist=True" in str(w.message)]
    return trainer.callback_metrics["val_mean"].item(), ds.tensors[0][:, 0].mean().item(), hints


def test_lightning_logs_synced_scalars_without_sync_dist():
    results = run_distributed(_scalar_logging, 2, timeout=240)
    for logged, expected, hints in results:
        assert logged == pytest.approx(expected, rel=1e-6)  # MeanMetric: a float32 result (torchmetrics' dtype)
        assert hints == []  # Lightning's "use sync_dist=True" hint is silenced for our values


def _ignite_parallel(local_rank, n):
    import ignite.distributed as idist
    from ignite.engine import create_supervised_evaluator

    from torchtally import MeanMetric
    from torchtally.adapters.ignite import attach

    ds = make_dataset(n, seed=n)
    loader = idist.auto_dataloader(ds, batch_size=4, shuffle=False)
    assert type(loader.sampler).__name__ == "DistributedSampler"
    evaluator = create_supervised_evaluator(
        torch.nn.Identity(), output_transform=lambda x, y, y_pred: {"y_pred": y_pred, "y": y, "x": x}
    )
    attach(make_metrics(), evaluator, "metrics")
    attach(MeanMetric(), evaluator, "loss", output_transform=lambda o: per_sample_loss(o["y_pred"], o["y"]))
    evaluator.run(loader)
    check_against_sklearn(
        evaluator.state.metrics["metrics"], evaluator.state.metrics["loss"], ds, f"idist rank {idist.get_rank()}"
    )


def test_ignite_parallel_gloo_is_exact():
    import ignite.distributed as idist

    with idist.Parallel(backend="gloo", nproc_per_node=2) as parallel:
        parallel.run(_ignite_parallel, 2 * 6 + 1)
