"""FabricMetricHook in a real 2-process Lightning Fabric job on CPU (strategy="ddp", gloo):
``fabric.setup_dataloaders`` pads N = 19 to 20 with a duplicate; the synced result must equal one
process over the dataset, a plain loop must count the duplicate, and the checkpoint fabric.save
writes must load at 2 processes and at 1, with every rank's synced result that of one process."""

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


def _fabric_ranks(rank, world_size, save_path):
    """An evaluation epoch, ``fabric.save(save_path)`` and ``fabric.load`` of it, on every rank."""
    from lightning.fabric import Fabric

    from torchtally.adapters.fabric import FabricMetricHook

    # The process group exists already; LOCAL_RANK tells Fabric the processes were launched
    # externally (as torchrun would), so fabric.launch() runs in place.
    os.environ.update(LOCAL_RANK=str(rank), NODE_RANK="0")
    fabric = Fabric(accelerator="cpu", devices=world_size, strategy="ddp")
    fabric.launch()
    assert fabric.world_size == world_size and fabric.global_rank == rank
    hook = FabricMetricHook(make_collection(), fabric=fabric)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Fabric's notes about workers
        loader = fabric.setup_dataloaders(DataLoader(make_dataset(N), batch_size=BATCH))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a padded DistributedSampler found: no warning
        result = evaluate(hook, loader)
    out = {"result": result, "plain": evaluate_without_adapter(make_collection(), loader)}
    fabric.save(save_path, {"metrics": hook})
    hook.metrics.reset()
    fabric.barrier()
    fabric.load(save_path, {"metrics": hook})
    out["restored"] = as_plain(hook.metrics.compute())
    out["rows"] = sum(len(t) for _, t in loader)
    return out


def test_fabric_ddp_equals_one_process_and_resumes_at_another_world_size(tmp_path):
    expected = single_process(N)
    checkpoint = str(tmp_path / "metrics.ckpt")
    results = run_distributed(_fabric_ranks, 2, checkpoint, timeout=90)
    assert sum(out["rows"] for out in results) == N + 1  # the sampler padded one duplicate
    for rank, out in enumerate(results):
        assert_equal_results(out["result"], expected, f"rank {rank}")
        assert int(out["plain"]["confmat"].sum()) == N + 1, f"rank {rank}: the plain loop counts the duplicate"
        assert_equal_results(out["restored"], expected, f"rank {rank}, after fabric.load")
    assert not torch.equal(results[0]["plain"]["confmat"], expected["confmat"])
    # the 2-process checkpoint loaded by one process (this one: a third Fabric job would double
    # the test's time; the Accelerate runs load the same form at 3 -> 2 and 2 -> 3 processes)
    from lightning.fabric import Fabric

    from torchtally.adapters.fabric import FabricMetricHook

    fabric = Fabric(accelerator="cpu", devices=1)
    hook = FabricMetricHook(make_collection(), fabric=fabric)
    fabric.load(checkpoint, {"metrics": hook})  # torch.load(weights_only=True) underneath
    assert int(hook.metrics["confmat"].compute_local().sum()) == N  # both ranks' rows, each once
    assert_equal_results(as_plain(hook.metrics.compute()), expected, "loaded by one process")
