"""Threads, shared caches and results the caller owns (torchtally.base.guard).

* One metric updated from two threads counts every sample and every update (the kernels
  release the GIL, so without the per-metric lock counts and bookkeeping interleave).
* A collection's metric updated directly drops the cached results of the metrics sharing its
  state.
* Editing a result of ``compute()`` in place changes neither the next ``compute()`` nor the state.
"""

import copy
import pickle
import sys
import threading
from typing import Any, Callable, List

import pytest
import torch
from support.metric_catalogue import METRICS, entry_id
from support.toy_metrics import MeanScore as ToyMean
from support.toy_metrics import SumMetric as ToySum
from support.toy_metrics import make_data

from torchtally import MetricCollection
from torchtally.aggregation import CatMetric, SumMetric
from torchtally.classification import (
    BinaryPrecisionRecallCurve,
    MulticlassAccuracy,
    MulticlassF1Score,
    MulticlassPrecision,
)


def _in_threads(work: Callable[[int], None], n_threads: int = 2) -> None:
    """Run work(i) in ``n_threads`` threads started together; re-raise the first failure."""
    barrier = threading.Barrier(n_threads)
    errors: List[BaseException] = []

    def run(i: int) -> None:
        try:
            barrier.wait()
            work(i)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n_threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]


@pytest.fixture(autouse=True)
def _switch_often():
    """Let threads interleave between bytecodes as often as possible (makes a race likely)."""
    before = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(before)


def _multiclass(n: int, seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    return torch.rand(n, 4, generator=g), torch.randint(0, 4, (n,), generator=g)


# (name, maker, batch): the binned curve's histogram kernel and the confusion matrix kernel
# write counts with the GIL released; CatMetric and SumMetric update Python-side structures.
CASES = [
    (
        "binned_curve",
        lambda: BinaryPrecisionRecallCurve(thresholds=11),
        (torch.rand(4000, generator=torch.Generator().manual_seed(1)), torch.randint(0, 2, (4000,))),
    ),
    ("confmat", lambda: MulticlassAccuracy(4, average="micro"), _multiclass(4000)),
    ("cat", CatMetric, (torch.arange(7.0),)),
    ("sum", SumMetric, (torch.ones(5, dtype=torch.float64),)),
]


@pytest.mark.parametrize("name,make,batch", CASES, ids=[c[0] for c in CASES])
def test_two_threads_updating_one_metric_lose_nothing(name, make, batch):
    per_thread = 150
    shared = make()
    _in_threads(lambda i: [shared.update(*batch) for _ in range(per_thread)])
    serial = make()
    for _ in range(2 * per_thread):
        serial.update(*batch)
    assert shared.update_count == 2 * per_thread
    for key, value in serial.metric_state.items():
        assert torch.equal(shared.metric_state[key], value), key


def test_updates_racing_computes_stay_consistent():
    batch = _multiclass(500)
    m = MulticlassAccuracy(4, average="micro").update(*batch)
    seen: List[int] = []

    def work(i: int) -> None:
        for _ in range(100):
            if i == 0:
                m.update(*batch)
            else:  # every compute sees whole updates only: a whole number of batches counted
                m.compute()
                seen.append(int(m.confmat.sum()) % 500)

    _in_threads(work)
    assert m.update_count == 101 and int(m.confmat.sum()) == 101 * 500
    assert set(seen) == {0}
    assert m.compute() == MulticlassAccuracy(4, average="micro").update(*batch).compute()


def _group(average: str = "micro"):
    return MetricCollection(
        {
            "acc": MulticlassAccuracy(4, average="micro"),
            "f1": MulticlassF1Score(4, average=average),
            "prec": MulticlassPrecision(4, average="macro"),
        }
    )


def test_a_collection_and_one_of_its_metrics_updated_from_two_threads_lose_nothing():
    coll = _group()
    assert coll.compute_groups == {0: ["acc", "f1", "prec"]}
    batch = _multiclass(2000)
    _in_threads(lambda i: [(coll if i == 0 else coll["f1"]).update(*batch) for _ in range(100)])
    assert int(coll["acc"].confmat.sum()) == 200 * 2000
    assert coll["acc"].update_count == coll["prec"].update_count == 200


def test_a_metric_updated_directly_drops_the_cached_results_of_the_metrics_sharing_its_state():
    coll = _group()
    first, second = _multiclass(50, 0), _multiclass(50, 1)
    coll.update(*first)
    stale = coll.compute()
    coll["f1"].update(*second)  # directly, not through the collection
    both = MulticlassAccuracy(4, average="micro").update(*first).update(*second).compute()
    assert torch.equal(coll["acc"].compute(), both) and not torch.equal(stale["acc"], both)
    assert coll["acc"].update_count == 2
    assert torch.equal(coll.compute()["acc"], both)
    coll["prec"].reset()  # a reset through one of them resets the state they share
    assert coll["acc"].update_count == 0 and int(coll["acc"].confmat.sum()) == 0


def test_a_metric_that_assigns_new_state_objects_keeps_its_group_current():
    """toy SumMetric assigns new tensors in every update: the metrics sharing them follow."""
    coll = MetricCollection({"counts": ToySum(shared=True), "mean": ToyMean(shared=True)})
    assert coll.compute_groups == {0: ["counts", "mean"]}
    data = make_data(20)
    coll.update(*data)
    coll.compute()
    coll["mean"].update(*data)  # the sharer, directly: new objects
    assert coll["counts"].counts is coll["mean"].counts
    assert int(coll.compute()["counts"][0].sum()) == 40


# -- results are the caller's -----------------------------------------------------------------


def _leaves(result: Any) -> List[torch.Tensor]:
    return [t for t in torch.utils._pytree.tree_leaves(result) if isinstance(t, torch.Tensor)]


def _spoil(result: Any) -> None:
    for t in _leaves(result):
        if t.numel():
            t.fill_(123 if not t.dtype.is_floating_point else 123.5)


@pytest.mark.parametrize("entry", METRICS, ids=entry_id)
@pytest.mark.parametrize("with_cache", [True, False])
def test_editing_a_result_changes_neither_the_next_compute_nor_the_state(entry, with_cache):
    m = entry.make(**dict(entry.kwargs), compute_with_cache=with_cache)
    m.update(*entry.batch(12, generator=torch.Generator().manual_seed(0)))
    state = {k: v.clone() for k, v in m.metric_state.items()}
    first = m.compute()
    want = [t.clone() for t in _leaves(first)]
    _spoil(first)
    again = m.compute()
    assert all(
        torch.equal(a, b) or (a.isnan().any() and torch.equal(a.isnan(), b.isnan()))
        for a, b in zip(_leaves(again), want)
    ), entry.name
    assert all(torch.equal(m.metric_state[k], v) for k, v in state.items())
    _spoil(m.compute_local())
    assert all(torch.equal(m.metric_state[k], v) for k, v in state.items())


def test_collection_results_are_copies():
    coll = _group()
    coll.update(*_multiclass(40))
    first = coll.compute()
    want = {k: v.clone() for k, v in first.items()}
    for v in first.values():
        v.fill_(7.0)
    again = coll.compute()
    assert all(torch.equal(again[k], want[k]) for k in want)
    assert all(torch.equal(coll[k].compute(), want[k]) for k in want)


# -- the lock and copies ----------------------------------------------------------------------


def test_copies_get_locks_of_their_own_and_collections_share_one():
    m = MulticlassAccuracy(4).update(*_multiclass(10))
    for dup in (copy.deepcopy(m), m.clone(), pickle.loads(pickle.dumps(m))):
        assert dup._lock is not m._lock
        _in_threads(lambda i: [dup.update(*_multiclass(10)) for _ in range(20)])
        assert dup.update_count == 41
    coll = _group()
    for dup in (coll.clone(), pickle.loads(pickle.dumps(coll))):
        locks = {id(dup._lock)} | {id(metric._lock) for metric in dup.values()}
        assert len(locks) == 1 and dup._lock is not coll._lock
        dup["f1"].update(*_multiclass(10))
        assert dup["acc"].update_count == 1 and coll["acc"].update_count == 0
    alone = coll["f1"].clone()  # a metric copied out of a collection stands alone
    alone.update(*_multiclass(10))
    assert alone.update_count == 1 and coll["acc"].update_count == 0 and alone._lock is not coll._lock
