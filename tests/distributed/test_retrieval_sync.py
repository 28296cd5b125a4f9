"""Retrieval metrics on 2 and 3 gloo ranks, every query's documents split across ranks and
batches (ties in score included): every rank's result equals one process over all the documents
(in rank order), exactly; the sync's collectives are counted (documents: the header and one
padded all_gather; queries_complete: the three sum states, small enough to travel inside the
header exchange, so that one collective is the whole sync)."""

from typing import Any, Dict, List, Tuple

import pytest
import torch

import torchtally.retrieval as ttr
from torchtally.testing import count_collectives, run_distributed

pytestmark = pytest.mark.distributed

CASES = (
    ("RetrievalMAP", {}),
    ("RetrievalMRR", {"top_k": 3}),
    ("RetrievalNormalizedDCG", {"top_k": 5}),
    ("RetrievalPrecision", {"top_k": 4, "adaptive_k": True}),
    ("RetrievalRecall", {"top_k": 4}),
    ("RetrievalHitRate", {"top_k": 2}),
    ("RetrievalFallOut", {"top_k": 4, "aggregation": "median"}),
    ("RetrievalRPrecision", {"empty_target_action": "skip"}),
    ("RetrievalAUROC", {"top_k": 6}),
)
N = 301


def documents(graded: bool) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(5)
    indexes = torch.randint(0, 25, (N,), generator=g) * 7919  # sparse ids
    preds = torch.randint(-2, 6, (N,), generator=g).float() / 4  # many ties
    target = torch.randint(0, 4 if graded else 2, (N,), generator=g)
    return preds, target if graded else target.bool(), indexes


def shard(rank: int, world_size: int) -> slice:
    """Uneven contiguous shards in rank order."""
    bounds = [0] + [N * (r + 1) // world_size + (7 if r == 0 else 0) for r in range(world_size - 1)] + [N]
    return slice(bounds[rank], bounds[rank + 1])


def worker(rank: int, world_size: int) -> Dict[str, Any]:
    out: Dict[str, Any] = {}
    for name, kwargs in CASES:
        preds, target, indexes = documents(name == "RetrievalNormalizedDCG")
        part = shard(rank, world_size)
        p, t, i = preds[part], target[part], indexes[part]
        m = getattr(ttr, name)(**kwargs)
        for start in range(0, p.shape[0], 23):  # several batches per rank
            m.update(p[start : start + 23], t[start : start + 23], i[start : start + 23])
        with count_collectives() as counter:
            out[name] = m.compute()
        out[name + ":collectives"] = dict(counter.by_name)
    # queries_complete: each rank holds whole queries (its own ids), in two batches
    preds, target, indexes = documents(False)
    mine = (indexes // 7919) % world_size == rank
    p, t, i = preds[mine], target[mine], indexes[mine]
    order = torch.sort(i, stable=True).indices
    p, t, i = p[order], t[order], i[order]
    cut = int((i < i.median()).sum()) if i.numel() else 0
    m = ttr.RetrievalMAP(queries_complete=True)
    m.update(p[:cut], t[:cut], i[:cut])
    m.update(p[cut:], t[cut:], i[cut:])
    with count_collectives() as counter:
        out["complete"] = m.compute()
    out["complete:collectives"] = dict(counter.by_name)
    return out


def expected() -> Dict[str, torch.Tensor]:
    result = {}
    for name, kwargs in CASES:
        m = getattr(ttr, name)(**kwargs)
        m.update(*documents(name == "RetrievalNormalizedDCG"))
        result[name] = m.compute()
    m = ttr.RetrievalMAP()
    m.update(*documents(False))
    result["complete"] = m.compute()
    return result


@pytest.mark.parametrize("world_size", [2, 3])
def test_ranks_equal_one_process(world_size):
    results: List[Dict[str, Any]] = run_distributed(worker, world_size, timeout=240)
    want = expected()
    for rank, got in enumerate(results):
        for name, _ in CASES:
            assert torch.equal(got[name], want[name]), (rank, name, got[name], want[name])
            collectives = got[name + ":collectives"]
            # the header exchange and one padded all_gather of the documents
            assert collectives == {"all_to_all_single": 1, "all_gather_single": 1}, (name, collectives)
        torch.testing.assert_close(got["complete"], want["complete"], rtol=1e-6, atol=1e-7)
        # three sum states: they travel inside the header exchange (a small plan), no gather
        assert got["complete:collectives"] == {"all_to_all_single": 1}, got["complete:collectives"]
