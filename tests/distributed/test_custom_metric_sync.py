"""Metrics written for torchmetrics, on 3 gloo ranks with uneven shards (rank 2 has no data):
the "Implementing a Metric" examples with only the import changed (tests/support/
implement_examples.py), list states of every reduction, what they cost, and the errors of ranks
that disagree. torchmetrics on one process over all the data is the oracle of every value;
where torchmetrics can sync too (the same number of list items on every rank) its synced value
on the same ranks is compared as well."""

from typing import Any, Dict, List

import pytest
import torch
from support.implement_examples import examples
from support.rank_pools import run_on_ranks

import torchtally
from torchtally import MetricCollection, SyncError
from torchtally.testing import count_collectives
from torchtally.utilities.distributed import gather_all_tensors

torchmetrics = pytest.importorskip("torchmetrics")

WORLD = 3
SIZES = [[6, 5], [4], []]  # batches per rank: uneven, rank 2 empty


def shards(seed: int = 0) -> List[List[tuple]]:
    """Per rank, (preds, target) float batches; all ranks' batches in rank order are the data."""
    g = torch.Generator().manual_seed(seed)
    return [[(torch.randn(n, generator=g), torch.randn(n, generator=g)) for n in sizes] for sizes in SIZES]


def label_shards(seed: int = 1) -> List[List[tuple]]:
    g = torch.Generator().manual_seed(seed)
    return [
        [(torch.randint(0, 3, (n,), generator=g), torch.randint(0, 3, (n,), generator=g)) for n in s] for s in SIZES
    ]


class TallyCollect(torchtally.Metric):
    """One list state ``values``; compute: what the sync gave (the list or the tensor)."""

    full_state_update = False

    def __init__(self, reduce: Any = "cat", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.add_state("values", default=[], dist_reduce_fx=reduce)

    def update(self, x: torch.Tensor) -> None:
        self.values.append(x)

    def compute(self) -> Any:
        return list(self.values) if isinstance(self.values, list) else self.values


class MetricsCollect(torchmetrics.Metric):
    """TallyCollect, written for torchmetrics."""

    full_state_update = False

    def __init__(self, reduce: Any = "cat", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.add_state("values", default=[], dist_reduce_fx=reduce)

    def update(self, x: torch.Tensor) -> None:
        self.values.append(x)

    def compute(self) -> Any:
        return list(self.values) if isinstance(self.values, list) else self.values


class CatRows(torchtally.Metric):
    """The same rows in a tensor "cat" state (torchtally's own form): the cost to compare with."""

    def __init__(self) -> None:
        super().__init__()
        self.add_state("values", torch.empty(0), reduce="cat")

    def update(self, x: torch.Tensor) -> None:
        self.append_state("values", x)

    def compute(self) -> torch.Tensor:
        return self.values


def stack_sum(items: List[torch.Tensor]) -> torch.Tensor:
    return torch.stack(items).sum(0)


def examples_worker(rank: int, world_size: int) -> Dict[str, Any]:
    ex = examples("torchtally")
    mine, labels = shards()[rank], label_shards()[rank]
    out: Dict[str, Any] = {}
    accuracy, spearman = ex["ScaffoldedAccuracy"](), ex["MySpearmanCorrCoef"]()
    out["acc_steps"] = [accuracy(*b) for b in labels]  # forward: each batch alone, this rank's
    out["sp_steps"] = [spearman(*b) for b in mine]
    out["acc"], out["sp"] = accuracy.compute(), spearman.compute()
    out["sp_again"] = spearman.compute()  # cached: still every rank's
    out["local_items"] = list(spearman.preds)  # sync never touches the local list
    spearman.update(torch.tensor([1.0, 2.0]), torch.tensor([2.0, 1.0]))  # accumulation goes on locally
    out["local_after"] = len(spearman.preds)

    collection = MetricCollection({"acc": ex["ScaffoldedAccuracy"](), "sp": ex["MySpearmanCorrCoef"]()})
    for b, lb in zip(mine, labels):
        collection["sp"].update(*b)
        collection["acc"].update(*lb)
    with count_collectives() as counter:
        out["collection"] = collection.compute()
    out["collection_collectives"] = counter.total

    as_list, as_cat = TallyCollect(), CatRows()
    for p, _ in mine:
        as_list.update(p)
        as_cat.update(p)
    with count_collectives() as counter:
        out["list_rows"] = as_list.compute()
    out["list_calls"] = dict(counter.by_name)
    with count_collectives() as counter:
        out["cat_rows"] = as_cat.compute()
    out["cat_calls"] = dict(counter.by_name)
    via_fn = TallyCollect(dist_sync_fn=gather_all_tensors)
    for p, _ in mine:
        via_fn.update(p)
    out["via_gather_all_tensors"] = via_fn.compute()
    return out


def test_the_docs_examples_on_three_ranks_equal_torchmetrics_on_one():
    results = run_on_ranks(examples_worker, WORLD)
    tm = examples("torchmetrics")
    everything = [b for rank in shards() for b in rank]
    every_label = [b for rank in label_shards() for b in rank]
    oracle_acc, oracle_sp = tm["ScaffoldedAccuracy"](), tm["MySpearmanCorrCoef"]()
    for b in every_label:
        oracle_acc.update(*b)
    for b in everything:
        oracle_sp.update(*b)
    acc, sp = oracle_acc.compute(), oracle_sp.compute()
    rows = torch.cat([p for p, _ in everything])
    for rank, out in enumerate(results):
        torch.testing.assert_close(out["acc"], acc, rtol=0, atol=0)
        torch.testing.assert_close(out["sp"], sp, rtol=1e-6, atol=1e-7)
        torch.testing.assert_close(out["sp_again"], sp, rtol=1e-6, atol=1e-7)
        torch.testing.assert_close(out["collection"]["acc"], acc, rtol=0, atol=0)
        torch.testing.assert_close(out["collection"]["sp"], sp, rtol=1e-6, atol=1e-7)
        # the header, one all_reduce of the accuracy's sums, one gather of both list states
        assert out["collection_collectives"] == 3
        assert torch.equal(out["list_rows"], rows) and torch.equal(out["cat_rows"], rows)
        assert torch.equal(out["via_gather_all_tensors"], rows)
        # a list state costs what a tensor cat state costs (at most one collective more)
        assert sum(out["list_calls"].values()) <= sum(out["cat_calls"].values()) + 1
        assert out["list_calls"] == out["cat_calls"]
        assert [len(x) for x in out["local_items"]] == SIZES[rank] and out["local_after"] == len(SIZES[rank]) + 1
        # forward's batch values: this rank's batch alone, as torchmetrics' forward gives them
        for step, (b, lb) in enumerate(zip(shards()[rank], label_shards()[rank])):
            torch.testing.assert_close(out["sp_steps"][step], tm["MySpearmanCorrCoef"]()(*b), rtol=1e-6, atol=1e-7)
            torch.testing.assert_close(out["acc_steps"][step], tm["ScaffoldedAccuracy"]()(*lb), rtol=0, atol=0)


def ragged_items(rank: int) -> List[torch.Tensor]:
    """Rank r's items: 2 each, item k of shape (r + k + 1, k + 1) (the same dims on every rank,
    other sizes), so that torchmetrics can gather them too."""
    g = torch.Generator().manual_seed(10 + rank)
    return [torch.randn(rank + k + 1, k + 1, generator=g) for k in range(2)]


def reductions_worker(rank: int, world_size: int) -> Dict[str, Any]:
    out: Dict[str, Any] = {}
    for library, cls in (("torchtally", TallyCollect), ("torchmetrics", MetricsCollect)):
        for reduce in (None, stack_sum):
            metric = cls(reduce)
            for item in ragged_items(rank) if reduce is None else [torch.full((2,), float(rank))] * 2:
                metric.update(item)
            out[library, getattr(reduce, "__name__", None)] = metric.compute()
        manual = cls("cat")  # torchmetrics' manual sync: the synced tensor until unsync()
        for p, _ in shards()[rank]:
            manual.update(p)
        manual.sync()
        out[library, "synced"] = manual.values
        manual.unsync()
        out[library, "unsynced"] = manual.values
    uneven = TallyCollect(None)  # rank r holds r items: torchmetrics cannot gather this
    for k in range(rank):
        uneven.update(torch.tensor([rank, k]))
    out["uneven"] = uneven.compute()
    return out


def test_list_reductions_equal_torchmetrics_synced_on_the_same_ranks():
    results = run_on_ranks(reductions_worker, WORLD)
    for out in results:
        for reduce in (None, "stack_sum"):
            ours, theirs = out["torchtally", reduce], out["torchmetrics", reduce]
            if reduce is None:
                assert type(ours) is list and len(ours) == len(theirs) == 2 * WORLD
                for a, b in zip(ours, theirs):
                    assert a.dtype == b.dtype and torch.equal(a, b)
            else:
                assert torch.equal(ours, theirs)
        assert torch.equal(out["torchtally", "synced"], out["torchmetrics", "synced"])
        assert type(out["torchtally", "unsynced"]) is list
        assert [t.shape for t in out["torchtally", "unsynced"]] == [t.shape for t in out["torchmetrics", "unsynced"]]
        expected = [torch.tensor([r, k]) for k in range(WORLD) for r in range(WORLD) if k < r]  # round by round
        assert [t.tolist() for t in out["uneven"]] == [t.tolist() for t in expected]


def mismatch_worker(rank: int, world_size: int) -> Dict[str, Any]:
    out: Dict[str, Any] = {}
    metric = TallyCollect()
    if rank < 2:
        metric.update(torch.zeros(2, 3, dtype=torch.float32 if rank == 0 else torch.float64))
    try:
        metric.compute()
        out["dtype"] = None
    except Exception as exc:
        out["dtype"] = (type(exc).__name__, str(exc))
    ragged = TallyCollect()
    ragged.update(torch.zeros(3))
    if rank == 1:
        ragged.update(torch.zeros(2, 2))  # cannot be concatenated: this rank's error
    try:
        ragged.compute()
        out["ragged"] = None
    except Exception as exc:
        out["ragged"] = (type(exc).__name__, str(exc))
    after = TallyCollect()  # the process group is still usable
    after.update(torch.tensor([float(rank)]))
    out["after"] = after.compute()
    shaped = torch.full((rank + 1, 2 + rank), float(rank))
    out["gathered"] = gather_all_tensors(shaped)
    return out


def test_ranks_that_disagree_raise_on_every_rank_and_stay_usable():
    results = run_on_ranks(mismatch_worker, WORLD)
    for rank, out in enumerate(results):
        kind, message = out["dtype"]
        assert kind == "SyncError" and issubclass(SyncError, Exception)
        assert "rank 0 holds torch.float32" in message and "rank 1 torch.float64" in message and "values" in message
        kind, message = out["ragged"]
        if rank == 1:
            assert kind == "ValueError" and "cannot be concatenated" in message
        else:
            assert kind == "SyncError" and "rank(s) [1]" in message
        assert torch.equal(out["after"], torch.arange(float(WORLD)))
        for r, t in enumerate(out["gathered"]):
            assert torch.equal(t, torch.full((r + 1, 2 + r), float(r)))
