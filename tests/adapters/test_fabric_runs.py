"""FabricMetricHook in a real 2-process Lightning Fabric job on CPU (strategy="ddp", gloo):
``fabric.setup_dataloaders`` pads N = 19 to 20 with a duplicate; the synced result must equal one
process over the dataset, a plain loop must count the duplicate, and fabric.save / fabric.load
must give every rank its own states back."""

import os
import warnings

import pytest
import torch
from support.launcher_eval import (
    BATCH,
    as_plain,
    assert_equal_results,
    evaluate,
    evaluate_without_adapter,
    make_collection,
    make_dataset,
    single_process,
)
from torch.utils.data import DataLoader

from torchtally.testing import run_distributed

pytestmark = pytest.mark.distributed

N = 19


def _fabric_ranks(rank, world_size, checkpoint):
    from lightning.fabric import Fabric

    from torchtally.adapters.fabric import FabricMetricHook

    # The process group exists already; LOCAL_RANK tells Fabric the processes were launched
    # externally (as torchrun would), so fabric.launch() runs in place.
    os.environ.update(LOCAL_RANK=str(rank), NODE_RANK="0")
    fabric = Fabric(accelerator="cpu", devices=world_size, strategy="ddp")
    fabric.launch()
    assert fabric.world_size == world_size and fabric.global_rank == rank
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Fabric's notes about workers
        loader = fabric.setup_dataloaders(DataLoader(make_dataset(N), batch_size=BATCH))
    hook = FabricMetricHook(make_collection(), fabric=fabric)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a padded DistributedSampler found: no warning
        result = evaluate(hook, loader)
    out = {"result": result, "plain": evaluate_without_adapter(make_collection(), loader)}
    fabric.save(checkpoint, {"metrics": hook})
    hook.metrics.reset()
    fabric.barrier()
    fabric.load(checkpoint, {"metrics": hook})
    out["restored"] = as_plain(hook.metrics.compute())
    out["rows"] = sum(len(t) for _, t in loader)
    return out


def test_fabric_ddp_equals_one_process(tmp_path):
    expected = single_process(N)
    results = run_distributed(_fabric_ranks, 2, str(tmp_path / "metrics.ckpt"), timeout=90)
    assert sum(out["rows"] for out in results) == N + 1  # the sampler padded one duplicate
    for rank, out in enumerate(results):
        assert_equal_results(out["result"], expected, f"rank {rank}")
        assert int(out["plain"]["confmat"].sum()) == N + 1, f"rank {rank}: the plain loop counts the duplicate"
        assert_equal_results(out["restored"], expected, f"rank {rank}, after fabric.load")
    assert not torch.equal(results[0]["plain"]["confmat"], expected["confmat"])
