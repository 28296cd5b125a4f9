"""torchmetrics' distributed options on real gloo ranks: forward with dist_sync_on_step (a metric
and a collection), dist_sync_fn (a torchmetrics-style gather used instead of torchtally's
packed collectives), torchmetrics' manual sync()/unsync(), compute before any update."""

import warnings
from typing import Any, Dict, List

import pytest
import torch
import torch.distributed as dist

from torchtally import MetricCollection
from torchtally.classification import MulticlassAccuracy, MulticlassConfusionMatrix
from torchtally.testing import count_collectives, run_distributed

C = 4


def shards(world_size: int) -> List[List[tuple]]:
    """Per rank, 3 batches of different sizes (rank r's batch i has 5 + r + i samples)."""
    g = torch.Generator().manual_seed(7)
    out = []
    for r in range(world_size):
        out.append(
            [(torch.randn(5 + r + i, C, generator=g), torch.randint(0, C, (5 + r + i,), generator=g)) for i in range(3)]
        )
    return out


def gather_all(tensor: torch.Tensor, group: Any = None) -> List[torch.Tensor]:
    """A torchmetrics-style dist_sync_fn: every rank's tensor (shapes may differ by dim 0)."""
    sizes = [torch.zeros(1, dtype=torch.int64) for _ in range(dist.get_world_size(group))]
    dist.all_gather(sizes, torch.tensor([tensor.shape[0] if tensor.dim() else 1]), group=group)
    width = int(max(sizes))
    padded = torch.zeros((width,) + tuple(tensor.shape[1:]), dtype=tensor.dtype) if tensor.dim() else tensor
    if tensor.dim():
        padded[: tensor.shape[0]] = tensor
    out = [torch.zeros_like(padded) for _ in sizes]
    dist.all_gather(out, padded.contiguous(), group=group)
    return [o[: int(n)] if tensor.dim() else o for o, n in zip(out, sizes)]


def worker(rank: int, world_size: int) -> Dict[str, Any]:
    mine = shards(world_size)[rank]
    out: Dict[str, Any] = {}

    stepped = MulticlassAccuracy(C, average="micro", dist_sync_on_step=True)
    out["step_values"] = [stepped(*batch) for batch in mine]  # each the batch of every rank
    out["step_local"] = stepped.compute_local()  # only this rank's batches accumulated
    out["step_final"] = stepped.compute()

    coll = MetricCollection(
        {"acc": MulticlassAccuracy(C, average="micro", dist_sync_on_step=True), "cm": MulticlassConfusionMatrix(C)}
    )
    with count_collectives() as counter:
        out["coll_step_values"] = [coll(*batch) for batch in mine]
    out["coll_step_collectives"] = counter.total
    out["coll_final"] = coll.compute()

    via_fn = MulticlassConfusionMatrix(C, dist_sync_fn=gather_all)
    for batch in mine:
        via_fn.update(*batch)
    with count_collectives() as counter:
        out["fn_result"] = via_fn.compute()
    out["fn_collectives"] = dict(counter.by_name)

    manual = MulticlassConfusionMatrix(C)
    for batch in mine:
        manual.update(*batch)
    local = manual.confmat.clone()
    manual.sync()
    out["manual_synced"] = manual.confmat.clone()
    manual.unsync()
    out["manual_restored"] = torch.equal(manual.confmat, local)

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out["never_updated"] = MulticlassAccuracy(C).compute()
    out["never_updated_warned"] = any("on any rank" in str(w.message) for w in caught)
    return out


def whole(world_size: int, batch_index=None) -> List[tuple]:
    data = shards(world_size)
    if batch_index is None:
        return [b for rank in data for b in rank]
    return [rank[batch_index] for rank in data]


def confmat(batches: List[tuple]) -> torch.Tensor:
    m = MulticlassConfusionMatrix(C)
    for b in batches:
        m.update(*b)
    return m.compute()


def accuracy(batches: List[tuple]) -> torch.Tensor:
    m = MulticlassAccuracy(C, average="micro")
    for b in batches:
        m.update(*b)
    return m.compute()


@pytest.mark.distributed
@pytest.mark.parametrize("world_size", [2, 3])
def test_torchmetrics_sync_options_on_real_ranks(world_size):
    runs = run_distributed(worker, world_size, timeout=240)
    everything = confmat(whole(world_size))
    for rank, out in enumerate(runs):
        for i, value in enumerate(out["step_values"]):  # forward with dist_sync_on_step: every rank's batch i
            assert torch.equal(value, accuracy(whole(world_size, i))), (rank, i)
        assert torch.equal(out["step_local"], accuracy(shards(world_size)[rank]))
        assert torch.equal(out["step_final"], accuracy(whole(world_size)))
        for i, values in enumerate(out["coll_step_values"]):
            assert torch.equal(values["acc"], accuracy(whole(world_size, i)))
            assert torch.equal(values["cm"], confmat([shards(world_size)[rank][i]]))  # cm: no step sync
        assert out["coll_step_collectives"] == 3 * 1  # one packed sync per step: the header, carrying the state
        assert torch.equal(out["coll_final"]["cm"], everything)
        assert torch.equal(out["fn_result"], everything)
        assert set(out["fn_collectives"]) == {"all_gather"}  # only the given function's collectives
        assert torch.equal(out["manual_synced"], everything) and out["manual_restored"]
        assert out["never_updated_warned"] and float(out["never_updated"]) == 0.0
