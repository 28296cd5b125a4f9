"""Sync across real gloo processes, world sizes 1 to 4, against one process over all the data.

One spawned run per world size makes every check (``run_checks``) and returns what it saw; the
tests below assert on it. A check that raises fails only the tests that read its results, with
its traceback (``RankResult``). Shards are uneven and some are empty. The world-size-2 run also
loads state_dicts saved by the world-size-4 run, merged pairwise; the world-size-3 run ends
with a rank that never joins a sync.
"""

import datetime
import time
import traceback
import warnings
from typing import Any, Callable, Dict, List

import ignite.engine
import ignite.metrics
import ignite.metrics.metric
import pytest
import torch
import torch.distributed as dist
from support.metric_tester import loaded, saved_states, states_of
from support.toy_metrics import (
    C,
    CatMetric,
    ConfusionAccuracy,
    ExtremesMetric,
    MeanScore,
    MomentsMetric,
    SumMetric,
    batches,
    make_data,
    mixed_metrics,
)

import torchtally
from torchtally import MetricCollection, NotComputableError, SyncError, all_reduced_synchronized
from torchtally.sync.plan import HEADER_SLOTS
from torchtally.testing import count_collectives, run_distributed

pytestmark = pytest.mark.distributed

# The sync header of a gloo group of up to torchtally.sync.dist.DIRECT_HEADER_MAX_WORLD ranks travels by
# all_to_all (every other collective of a sync keeps its name).
HEADER = "all_to_all_single"

N = 61
DATA = make_data(N, seed=3)
# Shard bounds per world size: rank r holds samples [b[r], b[r+1]). Every run has an empty rank
# except world size 1, and rank 0 (which hosts the store) is the empty one at world size 2.
BOUNDS = {1: [0, N], 2: [0, 0, N], 3: [0, 5, 5, N], 4: [0, 1, 40, 40, N]}
K_VALUES = (1, 4, 16)


def shard(ws: int, rank: int, phase: str):
    lo, hi = BOUNDS[ws][rank], BOUNDS[ws][rank + 1]
    mid = (lo + hi) // 2
    return {"first": (lo, mid), "second": (mid, hi), "all": (lo, hi)}[phase]


def feed(target, lo: int, hi: int):
    for batch in batches(DATA, lo, hi):
        target.update(*batch)
    return target


# -- metrics synced by the decorators ----------------------------------------------------------


@all_reduced_synchronized("correct", "seen:SUM", "big:SUM", "hist", "worst:MAX", "scale:PRODUCT")
class PlainCounter:
    """A plain class (no torchtally base) with Python ints/floats and a tensor as state."""

    def __init__(self, rank: int):
        self.correct, self.seen, self.worst, self.scale = 0, 0, 0.0, 1.0
        self.big = 2**60 + rank  # the sum over 4 ranks is exact only in int64, not float64
        self.hist = torch.zeros(C, dtype=torch.int64)
        self.fail = False

    def update(self, labels, scores, rows):
        self.correct += int((labels == 0).sum())
        self.seen += labels.numel()
        self.hist += torch.bincount(labels, minlength=C)
        if labels.numel():
            self.worst = max(self.worst, float(scores[:, 0].max()))
            self.scale *= 1.5

    def compute(self):
        seen = (self.correct, self.seen, self.big, self.hist.clone(), self.worst, self.scale)
        if self.fail:
            raise RuntimeError("compute failed on purpose")
        return seen


def make_ignite_counts(sync_all_reduce, reinit__is_reduced):
    """The same custom ignite metric, decorated by whichever library's decorators are given."""

    class Counts(ignite.metrics.Metric):
        @reinit__is_reduced
        def reset(self):
            self._num_correct = torch.tensor(0)
            self._class_hist = torch.zeros(C, dtype=torch.int64)
            self._num_examples = 0
            self._num_wrong = 0
            self._sum_score = 0.0
            self._max_score = float("-inf")

        @reinit__is_reduced
        def update(self, output):
            scores, labels = output
            pred = scores.argmax(dim=1)
            hits = int((pred == labels % 2).sum())
            self._num_correct += hits
            self._class_hist += torch.bincount(labels, minlength=C)
            self._num_examples += labels.numel()
            self._num_wrong += labels.numel() - hits
            self._sum_score += float(scores[:, 1].sum())
            self._max_score = max(self._max_score, float(scores[:, 0].max()))

        @sync_all_reduce("_num_correct", "_class_hist", "_num_examples", "_num_wrong", "_sum_score", "_max_score:MAX")
        def compute(self):
            return (
                int(self._num_correct),
                self._class_hist.tolist(),
                self._num_examples,
                self._num_wrong,
                self._sum_score,
                self._max_score,
            )

    return Counts


class MixedNumbers(ignite.metrics.Metric):
    """ignite's usual pattern: Python numbers reset to ints (or a bool) and accumulated as
    floats. Fed on rank 0 only, so at compute the other ranks still hold the ints."""

    @torchtally.reinit__is_reduced
    def reset(self):
        self._sum = 0
        self._num_examples = 0
        self._largest = 0
        self._smallest = 10**6
        self._scale = 1
        self._seen = False
        self._floor = float("-inf")  # a float everywhere, never updated
        self._votes = False  # a bool on the empty ranks, an int on rank 0

    @torchtally.reinit__is_reduced
    def update(self, scores):
        self._sum += float(scores.sum())
        self._num_examples += scores.numel()
        self._largest = max(self._largest, float(scores.max()))
        self._smallest = min(self._smallest, float(scores.min()))
        self._scale *= 1.5
        self._seen = True
        self._votes += 2

    @torchtally.sync_all_reduce(
        "_sum", "_num_examples", "_largest:MAX", "_smallest:MIN", "_scale:PRODUCT", "_seen:MAX", "_floor:MAX", "_votes"
    )
    def compute(self):
        return (
            self._sum,
            self._num_examples,
            self._largest,
            self._smallest,
            self._scale,
            self._seen,
            self._floor,
            self._votes,
        )


class ByteAndComplexRows(torchtally.Metric):
    """A uint8 cat state with an odd number of bytes per rank, then a 16-byte complex one."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.add_state("flags", torch.empty(0, dtype=torch.uint8), reduce="cat")
        self.add_state("phases", torch.empty(0, dtype=torch.complex128), reduce="cat")

    def update(self, rank):
        self.append_state("flags", torch.arange(2 * rank + 1, dtype=torch.uint8))
        self.append_state("phases", torch.full((rank + 1,), complex(rank, -rank), dtype=torch.complex128))

    def compute(self):
        return self.flags.clone(), self.phases.clone()


class BrokenMerge(MomentsMetric):
    def merge_state_values(self, name, values):
        raise RuntimeError("merge failed on purpose")


def mixed_numbers_scores():
    return DATA[1][:9, 0]  # about 1e3: the max and min are rank 0's floats


TallyIgniteCounts = make_ignite_counts(torchtally.sync_all_reduce, torchtally.reinit__is_reduced)
IgniteOwnCounts = make_ignite_counts(ignite.metrics.metric.sync_all_reduce, ignite.metrics.metric.reinit__is_reduced)


def ignite_batches(ws: int, rank: int):
    """ignite's Engine refuses empty data: here rank r takes samples r, r+ws, ... (never empty)."""
    labels, scores, _ = DATA
    idx = torch.arange(rank, N, ws)
    return [(scores[idx[i : i + 5]], labels[idx[i : i + 5]]) for i in range(0, len(idx), 5)]


def run_ignite_engine(metric_cls, ws: int, rank: int):
    engine = ignite.engine.Engine(lambda engine, batch: batch)
    metric_cls().attach(engine, "counts")
    with count_collectives() as counter:
        state = engine.run(ignite_batches(ws, rank), max_epochs=1)
    return state.metrics["counts"], dict(counter.by_name)


# -- what every rank runs ----------------------------------------------------------------------


# -- the checks: each fills its keys of the rank's result --------------------------------------
#
# One run per world size makes every check in order. A check that raises on a rank is recorded
# with its traceback and the run goes on with the next one, so only the tests reading that
# check's keys fail, and they show where it raised (see RankResult).

CHECKS: List[Callable[..., None]] = []


def check(fn: Callable[..., None]) -> Callable[..., None]:
    CHECKS.append(fn)
    return fn


def run_checks(rank: int, ws: int, merged_state_dicts=None, missing_rank_check=False) -> Dict[str, Any]:
    out: Dict[str, Any] = {"rank": rank, "failed_checks": {}}
    for fn in CHECKS:
        try:
            fn(rank, ws, out, merged_state_dicts=merged_state_dicts, missing_rank_check=missing_rank_check)
        except Exception:
            out["failed_checks"][fn.__name__] = traceback.format_exc()
    return out


@check
def instrument(rank: int, ws: int, out: Dict[str, Any], **_: Any) -> None:
    # The instrument itself: a plain all_reduce is seen once, and gives the right sum.
    probe = torch.tensor([rank + 10])
    with count_collectives() as counter:
        dist.all_reduce(probe)
    out["probe"] = (int(probe), dict(counter.by_name))


@check
def two_phases(rank: int, ws: int, out: Dict[str, Any], **_: Any) -> None:
    # Standalone metrics and a collection of the same metrics, in two phases around a compute.
    singles = mixed_metrics()
    coll = MetricCollection(mixed_metrics())
    for target in list(singles.values()) + [coll]:
        feed(target, *shard(ws, rank, "first"))
    out["singles_first"] = {name: m.compute() for name, m in singles.items()}
    before = states_of(coll)
    with count_collectives() as counter:
        out["coll_first"] = coll.compute()
    out["coll_count"] = dict(counter.by_name)
    out["plan_count"] = coll._sync_plan().collectives_per_sync
    after = states_of(coll)
    out["local_state_unchanged"] = all(torch.equal(before[k], after[k]) for k in before)
    with count_collectives() as counter:
        out["coll_first_again"] = coll.compute()
    out["second_compute_count"] = dict(counter.by_name)
    out["local_first"] = coll.compute_local() if rank_has_data(ws, rank, "first") else None
    for target in list(singles.values()) + [coll]:
        feed(target, *shard(ws, rank, "second"))
    out["singles_all"] = {name: m.compute() for name, m in singles.items()}
    out["coll_all"] = coll.compute()
    out["state_dict"] = saved_states(coll)


@check
def collectives_by_k(rank: int, ws: int, out: Dict[str, Any], **_: Any) -> None:
    # Collectives per sync do not grow with the number of metrics K.
    out["count_by_k"], out["sum_only_count_by_k"] = {}, {}
    for k in K_VALUES:
        big = MetricCollection({f"{i}_{n}": m for i in range(k) for n, m in mixed_metrics().items()})
        sums = MetricCollection({f"acc{i}": ConfusionAccuracy(num_classes=C + i) for i in range(k)})
        feed(big, *shard(ws, rank, "all"))
        feed(sums, *shard(ws, rank, "all"))
        with count_collectives() as counter:
            big.compute()
        out["count_by_k"][k] = counter.total
        with count_collectives() as counter:
            sums.compute()
        out["sum_only_count_by_k"][k] = counter.total


@check
def many_cat_states(rank: int, ws: int, out: Dict[str, Any], **_: Any) -> None:
    # More cat states than the fixed header has slots for their lengths: one extra header gather.
    many_cats = MetricCollection({f"cat{i}": CatMetric() for i in range(HEADER_SLOTS // 2)})  # 2 cat states each
    feed(many_cats, *shard(ws, rank, "all"))
    with count_collectives() as counter:
        out["many_cats"] = many_cats.compute()["cat34"]
    out["many_cats_count"] = (dict(counter.by_name), many_cats._sync_plan().collectives_per_sync)


@check
def shared_state(rank: int, ws: int, out: Dict[str, Any], **_: Any) -> None:
    # State shared by state_key: one update per batch on the owner, one slot in the sync.
    SumMetric.calls = 0
    shared = MetricCollection(
        {"counts": SumMetric(shared=True), "mean": MeanScore(shared=True), "ext": ExtremesMetric()}
    )
    feed(shared, *shard(ws, rank, "all"))
    out["shared_update_calls"] = SumMetric.calls
    out["shared"] = shared.compute()
    out["shared_plan_labels"] = [s.label for s in shared._sync_plan().specs]


@check
def recipient(rank: int, ws: int, out: Dict[str, Any], **_: Any) -> None:
    # Result on one recipient rank only.
    if ws > 1:
        recip = feed(MetricCollection(mixed_metrics(), recipient_rank=ws - 1), *shard(ws, rank, "all"))
        with count_collectives() as counter:
            out["recipient"] = recip.compute()
        out["recipient_count"] = dict(counter.by_name)
        out["recipient_single"] = feed(SumMetric(recipient_rank=0), *shard(ws, rank, "all")).compute()


@check
def never_updated(rank: int, ws: int, out: Dict[str, Any], **_: Any) -> None:
    # No rank updated: in ignite mode every rank raises NotComputableError (after the header,
    # consistently); otherwise every rank warns and computes over no data (torchmetrics).
    never = SumMetric()
    try:
        with never.raising_if_never_updated():
            never.compute()
        out["never_updated"] = "no error"
    except NotComputableError as exc:
        out["never_updated"] = f"NotComputableError: {exc}"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        counts, _ = never.compute()
    out["never_updated_warns"] = (int(counts.sum()), [str(w.message) for w in caught])


@check
def failing_compute(rank: int, ws: int, out: Dict[str, Any], **_: Any) -> None:
    # compute() that raises leaves the local state as it was.
    class Failing(SumMetric):
        def compute(self):
            assert self.counts.sum() == N or dist.get_world_size() == 1
            raise RuntimeError("boom")

    failing = feed(Failing(), *shard(ws, rank, "all"))
    before = states_of(failing)
    try:
        failing.compute()
        out["failing"] = "no error"
    except RuntimeError as exc:
        out["failing"] = str(exc)
    out["failing_state_kept"] = all(torch.equal(before[k], v) for k, v in states_of(failing).items())


@check
def decorated_plain_class(rank: int, ws: int, out: Dict[str, Any], **_: Any) -> None:
    # The decorators on a plain class, and on an ignite metric attached to ignite's Engine.
    plain = feed(PlainCounter(rank), *shard(ws, rank, "all"))
    local = (plain.correct, plain.seen, plain.big, plain.hist.clone(), plain.worst, plain.scale)
    with count_collectives() as counter:
        out["plain"] = plain.compute()
    out["plain_count"] = counter.total
    plain.fail = True
    try:
        plain.compute()
    except RuntimeError:
        pass
    now = (plain.correct, plain.seen, plain.big, plain.hist, plain.worst, plain.scale)
    out["plain_restored"] = all(
        (torch.equal(a, b) if isinstance(a, torch.Tensor) else (a == b and type(a) is type(b)))
        for a, b in zip(local, now)
    )


@check
def byte_gather_and_broken_merge(rank: int, ws: int, out: Dict[str, Any], **_: Any) -> None:
    # Cat states of 1- and 16-byte dtypes in one byte gather; a merge that fails after it.
    try:
        out["byte_and_complex"] = ByteAndComplexRows().update(rank).compute()
    except Exception as exc:
        out["byte_and_complex"] = f"{type(exc).__name__}: {exc}"
    try:
        feed(BrokenMerge(), *shard(ws, rank, "all")).compute()
        out["broken_merge"] = "no error"
    except Exception as exc:
        out["broken_merge"] = (type(exc).__name__, str(exc), type(exc.__cause__).__name__)


@check
def mixed_python_numbers(rank: int, ws: int, out: Dict[str, Any], **_: Any) -> None:
    # Python numbers that are ints on some ranks and floats on others: a rank that saw no data
    # still holds the ints its reset set.
    mixed = MixedNumbers()
    if rank == 0:
        mixed.update(mixed_numbers_scores())
    local = mixed.compute.__wrapped__(mixed)
    with count_collectives() as counter:
        try:
            out["mixed_numbers"] = mixed.compute()
        except SyncError as exc:
            out["mixed_numbers"] = f"SyncError: {exc}"
    out["mixed_numbers_count"] = dict(counter.by_name)
    out["mixed_numbers_restored"] = [(v, type(v)) for v in local] == [
        (v, type(v)) for v in mixed.compute.__wrapped__(mixed)
    ]


@check
def ignite_engine(rank: int, ws: int, out: Dict[str, Any], **_: Any) -> None:
    out["ignite_tally"] = run_ignite_engine(TallyIgniteCounts, ws, rank)
    out["ignite_own"] = run_ignite_engine(IgniteOwnCounts, ws, rank)


@check
def errors_on_every_rank(rank: int, ws: int, out: Dict[str, Any], **_: Any) -> None:
    if ws > 1:
        # Ranks declare different states: SyncError on every rank, before any data collective.
        odd = SumMetric(num_classes=C + 1 if rank == 0 else C)
        feed(odd, *shard(ws, rank, "all"))
        out["mismatch"] = sync_error_of(odd.compute)
        # One rank's state no longer matches its declaration: same, naming that rank.
        bent = feed(SumMetric(), *shard(ws, rank, "all"))
        if rank == ws - 1:
            bent.counts = torch.zeros(C + 2, dtype=torch.int64)
        out["bent"] = sync_error_of(bent.compute)
        # A rank whose compute finds a batch its device rejected (deferred CUDA checks, stood in
        # for here) stops the sync for every rank: it raises its ValueError, the others a
        # SyncError naming it, at once and before any data moves.
        rejecting = feed(SumMetric(), *shard(ws, rank, "all"))
        together = feed(MetricCollection(mixed_metrics()), *shard(ws, rank, "all"))
        if rank == 0:
            for m in [rejecting] + list(together._metrics.values()):
                m.__dict__["raise_rejected_cuda_updates"] = _reject
        out["rejected"] = rejection_of(rejecting.compute)
        out["rejected_collection"] = rejection_of(together.compute)
        if rank == 0:  # reported once: the next compute syncs as usual
            for m in [rejecting] + list(together._metrics.values()):
                del m.__dict__["raise_rejected_cuda_updates"]
        out["after_rejection"] = rejecting.compute()
        # The process group still works afterwards.
        out["after_errors"] = feed(SumMetric(), *shard(ws, rank, "all")).compute()


@check
def subgroup(rank: int, ws: int, out: Dict[str, Any], **_: Any) -> None:
    if ws >= 3:
        # A process group of ranks 0 and 2 only (every rank must create it); the recipient is a
        # rank *within* that group: group rank 1 = global rank 2.
        sub = dist.new_group([0, 2])
        if rank in (0, 2):
            out["subgroup"] = (
                feed(SumMetric(process_group=sub, recipient_rank=1), *shard(ws, rank, "all")).compute(),
                feed(CatMetric(process_group=sub), *shard(ws, rank, "all")).compute(),
            )


@check
def merged_state_dicts_resume(rank: int, ws: int, out: Dict[str, Any], merged_state_dicts=None, **_: Any) -> None:
    if merged_state_dicts is not None:
        restored = loaded(MetricCollection(mixed_metrics()), merged_state_dicts[rank])
        out["restored"] = restored.compute()


@check
def missing_rank(rank: int, ws: int, out: Dict[str, Any], missing_rank_check=False, **_: Any) -> None:
    if missing_rank_check:
        out["missing"] = check_missing_rank(rank, ws)


def rank_has_data(ws: int, rank: int, phase: str) -> bool:
    lo, hi = shard(ws, rank, phase)
    return hi > lo


def sync_error_of(fn) -> Dict[str, Any]:
    with count_collectives() as counter:
        try:
            fn()
            return {"error": None}
        except SyncError as exc:
            return {"error": str(exc), "counts": dict(counter.by_name)}


def _reject():
    raise ValueError("target: label 7 at index 3 is out of range [0, 5) (found on the GPU after that update returned)")


def rejection_of(fn) -> Dict[str, Any]:
    start = time.monotonic()
    with count_collectives() as counter:
        try:
            fn()
            return {"kind": None}
        except (ValueError, SyncError) as exc:
            return {
                "kind": type(exc).__name__,
                "error": str(exc),
                "counts": dict(counter.by_name),
                "seconds": time.monotonic() - start,
            }


def check_missing_rank(rank: int, ws: int):
    """The last rank never joins the sync; the others must raise SyncError naming it."""
    store = dist.distributed_c10d._get_default_store()
    coll = feed(MetricCollection(mixed_metrics(), sync_timeout=2.0), *shard(ws, rank, "all"))
    if rank == ws - 1:
        store.wait([f"test/missing/{r}" for r in range(ws - 1)], datetime.timedelta(seconds=60))
        return None
    start = time.monotonic()
    try:
        coll.compute()
        result = {"error": None}
    except SyncError as exc:
        result = {"error": str(exc), "missing_ranks": exc.missing_ranks, "seconds": time.monotonic() - start}
    store.set(f"test/missing/{rank}", "1")
    return result


# -- the runs, once each (memoised), and the single-process references ---------------------------

_runs: Dict[int, List["RankResult"]] = {}


class RankResult(dict):
    """One rank's keys. Reading a key that is missing fails with the reason, next to the test that
    needs it: the traceback of each check that raised on this rank, or how the rank ended."""

    def __init__(self, rank: int, outcome: Any) -> None:
        ok = isinstance(outcome, dict)
        super().__init__({k: v for k, v in outcome.items() if k != "failed_checks"} if ok else {})
        self.rank = rank
        self.failures = outcome["failed_checks"] if ok else {"the run": f"{type(outcome).__name__}: {outcome}"}

    def __missing__(self, key: str) -> Any:
        reasons = "\n".join(f"--- {name} raised:\n{tb}" for name, tb in self.failures.items())
        raise AssertionError(f"rank {self.rank} has no result {key!r}; {reasons or 'no check raised'}")


def results(ws: int) -> List[RankResult]:
    if ws not in _runs:
        merged = merged_pairs(results(4)) if ws == 2 else None
        outcomes = run_distributed(run_checks, ws, merged, ws == 3, timeout=240, return_exceptions=True)
        _runs[ws] = [RankResult(rank, outcome) for rank, outcome in enumerate(outcomes)]
    return _runs[ws]


def merged_pairs(run4: List[Dict[str, Any]]) -> List[Dict[str, torch.Tensor]]:
    """State dicts of 4 ranks, merged (0+1, 2+3) into 2, as one would to resume on 2 ranks."""
    colls = [loaded(MetricCollection(mixed_metrics()), r["state_dict"]) for r in run4]
    return [saved_states(colls[0].merge_state([colls[1]])), saved_states(colls[2].merge_state([colls[3]]))]


def reference(ws: int, phase: str) -> Dict[str, Any]:
    """One process over the union of every rank's ``phase`` samples, in rank order."""
    coll = MetricCollection(mixed_metrics())
    for rank in range(ws):
        feed(coll, *shard(ws, rank, phase))
    return coll.compute()


def assert_same(got, want, where=""):
    """Integers exactly; floats to 1e-12 relative; nested tuples/lists/dicts."""
    if isinstance(want, dict):
        assert sorted(got) == sorted(want), where  # a collection takes a dict in sorted key order
        for key in want:
            assert_same(got[key], want[key], f"{where}.{key}")
    elif isinstance(want, (tuple, list)):
        assert len(got) == len(want), where
        for i, (g, w) in enumerate(zip(got, want)):
            assert_same(g, w, f"{where}[{i}]")
    elif isinstance(want, torch.Tensor):
        assert isinstance(got, torch.Tensor) and got.dtype == want.dtype and got.shape == want.shape, where
        if want.dtype.is_floating_point:
            scale = float(want.abs().max()) if want.numel() else 0.0
            torch.testing.assert_close(got, want, rtol=1e-12, atol=1e-12 * scale, msg=where)
        else:
            assert torch.equal(got, want), where
    elif isinstance(want, float):
        assert got == pytest.approx(want, rel=1e-12), where
    else:
        assert got == want and type(got) is type(want), where


WORLD_SIZES = [1, 2, 3, 4]


# -- the tests --------------------------------------------------------------------------------


@pytest.mark.parametrize("ws", WORLD_SIZES)
def test_every_check_ran_to_its_end_on_every_rank(ws):
    for out in results(ws):
        assert out.failures == {}, f"rank {out.rank}: " + "\n".join(f"{n}:\n{tb}" for n, tb in out.failures.items())


def test_a_check_that_raises_fails_only_the_tests_reading_its_keys():
    out = RankResult(1, {"rank": 1, "kept": 3, "failed_checks": {"broken": "Traceback ... ValueError: boom"}})
    assert out["kept"] == 3 and "kept" in out and "gone" not in out
    with pytest.raises(
        AssertionError, match="rank 1 has no result 'gone'; --- broken raised:\nTraceback ... ValueError: boom"
    ):
        out["gone"]
    died = RankResult(2, RuntimeError("rank 2 exited with code 1"))
    with pytest.raises(AssertionError, match="the run raised:\nRuntimeError: rank 2 exited"):
        died["anything"]


@pytest.mark.parametrize("ws", WORLD_SIZES)
def test_runs_return_rank_ordered_results_and_count_collectives(ws):
    for rank, out in enumerate(results(ws)):
        assert out["rank"] == rank
        assert out["probe"] == (sum(r + 10 for r in range(ws)), {"all_reduce": 1})


@pytest.mark.parametrize("ws", WORLD_SIZES)
def test_distributed_equals_single_process(ws):
    first, whole = reference(ws, "first"), reference(ws, "all")
    for rank, out in enumerate(results(ws)):
        assert_same(out["coll_first"], first, f"rank {rank} collection, first half")
        assert_same(out["singles_first"], first, f"rank {rank} standalone metrics, first half")
        assert_same(out["coll_all"], whole, f"rank {rank} collection, after updating past a compute")
        assert_same(out["singles_all"], whole, f"rank {rank} standalone metrics, after a compute")


@pytest.mark.parametrize("ws", WORLD_SIZES)
def test_compute_twice_same_and_sync_leaves_local_state(ws):
    for rank, out in enumerate(results(ws)):
        assert_same(out["coll_first_again"], out["coll_first"], f"rank {rank}")
        # Nothing new anywhere: the ranks only agree on that (one header), no data moves.
        assert out["second_compute_count"] == ({} if ws == 1 else {HEADER: 1})
        assert out["local_state_unchanged"]
        if out["local_first"] is not None:
            own = MetricCollection(mixed_metrics())
            feed(own, *shard(ws, rank, "first"))
            assert_same(out["local_first"], own.compute(), f"rank {rank} compute_local")


@pytest.mark.parametrize("ws", WORLD_SIZES)
def test_collectives_per_sync_are_fixed_by_the_plan(ws):
    for out in results(ws):
        if ws == 1:
            assert out["coll_count"] == {} and set(out["count_by_k"].values()) == {0}
            continue
        # header + 5 (dtype, op) groups [int64 sum, float64 sum, float64 max, int64 min,
        # float64 prod] + one byte gather for the cat and merge states.
        assert out["coll_count"] == {HEADER: 1, "all_gather_single": 1, "all_reduce": 5}
        assert out["plan_count"] == 7
        assert out["count_by_k"] == dict.fromkeys(K_VALUES, 7)
        # Accuracy-like metrics with only int64 sums: while their confusion matrices fit in the
        # header (K = 1, 4), the header is the only collective; beyond, header + one all_reduce,
        # whatever K.
        assert out["sum_only_count_by_k"] == {1: 1, 4: 1, 16: 2}


@pytest.mark.parametrize("ws", WORLD_SIZES)
def test_header_overflow_for_many_cat_states(ws):
    whole = reference(ws, "all")["cat"]
    for out in results(ws):
        assert_same(out["many_cats"], whole)
        by_name, planned = out["many_cats_count"]
        assert planned == 3  # header + overflow header + one byte gather
        assert by_name == ({} if ws == 1 else {HEADER: 1, "all_gather_single": 2})


@pytest.mark.parametrize("ws", [2, 3, 4])
def test_recipient_rank_gets_the_result_alone(ws):
    whole = reference(ws, "all")
    runs = results(ws)
    for rank, out in enumerate(runs):
        if rank == ws - 1:
            assert_same(out["recipient"], whole)
        else:
            assert out["recipient"] == dict.fromkeys(whole)
        assert out["recipient_count"] == {HEADER: 1, "reduce": 5, "gather": 1}
    assert_same(runs[0]["recipient_single"], whole["sum"])
    assert all(out["recipient_single"] is None for out in runs[1:])


@pytest.mark.parametrize("ws", WORLD_SIZES)
def test_no_update_anywhere_raises_not_computable_on_every_rank(ws):
    where = "on any rank" if ws > 1 else "on this rank"
    for out in results(ws):
        assert out["never_updated"].startswith("NotComputableError") and where in out["never_updated"]
        total, messages = out["never_updated_warns"]
        assert total == 0 and any("before the ``update``" in m and where in m for m in messages)


@pytest.mark.parametrize("ws", [1, 3])
def test_shared_state_updates_once_and_syncs_once(ws):
    whole = reference(ws, "all")
    for rank, out in enumerate(results(ws)):
        assert out["shared_update_calls"] == len(list(batches(DATA, *shard(ws, rank, "all"))))
        assert_same(out["shared"]["counts"], whole["sum"])
        assert_same(out["shared"]["ext"], whole["ext"])
        counts, total = whole["sum"]
        assert_same(out["shared"]["mean"], total / counts.sum())
        assert [label for label in out["shared_plan_labels"] if "counts=" in label] == [
            "counts=SumMetric.counts",
            "counts=SumMetric.total",
        ]


@pytest.mark.parametrize("ws", [1, 4])
def test_compute_that_raises_keeps_local_state(ws):
    for out in results(ws):
        assert out["failing"] == "boom" and out["failing_state_kept"]


@pytest.mark.parametrize("ws", WORLD_SIZES)
def test_decorators_sync_python_numbers_exactly_and_restore(ws):
    labels, scores, _ = DATA
    want = (
        int((labels == 0).sum()),
        N,
        ws * 2**60 + sum(range(ws)),
        torch.bincount(labels, minlength=C),
        float(scores[:, 0].max()),
        1.5 ** sum(len(list(batches(DATA, *shard(ws, r, "all")))) for r in range(ws)),
    )
    for out in results(ws):
        assert_same(out["plain"], want)
        # A small plan: every value travels in the header, the one collective.
        assert out["plain_count"] == (1 if ws > 1 else 0)
        assert out["plain_restored"]


@pytest.mark.parametrize("ws", [2, 3, 4])
def test_cat_states_of_mixed_itemsizes_unpack_aligned(ws):
    flags = torch.cat([torch.arange(2 * r + 1, dtype=torch.uint8) for r in range(ws)])
    phases = torch.cat([torch.full((r + 1,), complex(r, -r), dtype=torch.complex128) for r in range(ws)])
    for rank, out in enumerate(results(ws)):
        assert isinstance(out["byte_and_complex"], tuple), f"rank {rank}: {out['byte_and_complex']}"
        assert_same(out["byte_and_complex"][0], flags)
        assert torch.equal(out["byte_and_complex"][1], phases)


@pytest.mark.parametrize("ws", [2, 4])
def test_a_failure_after_the_data_collectives_is_a_sync_error(ws):
    for out in results(ws):
        kind, message, cause = out["broken_merge"]
        assert kind == "SyncError" and cause == "RuntimeError"
        assert "BrokenMerge.moments" in message and "merge failed on purpose" in message


@pytest.mark.parametrize("ws", [2, 3, 4])
def test_decorators_sync_numbers_that_are_ints_on_some_ranks_and_floats_on_others(ws):
    scores = mixed_numbers_scores()
    want = (float(scores.sum()), 9, float(scores.max()), float(scores.min()), 1.5, True, float("-inf"), 2)
    for rank, out in enumerate(results(ws)):
        got = out["mixed_numbers"]
        assert isinstance(got, tuple), f"rank {rank}: {got}"
        assert [type(v) for v in got] == [type(v) for v in want], f"rank {rank}: {got}"
        assert got == want, f"rank {rank}"
        assert out["mixed_numbers_restored"]
        # A small plan: the numbers travel in the header with their kinds, and every rank
        # combines them in the agreed kind (the path of a large plan, one all_reduce per
        # (dtype, op) group, is checked in test_sync_small.py).
        assert out["mixed_numbers_count"] == {HEADER: 1}


@pytest.mark.parametrize("ws", [2, 4])
def test_ignite_metric_with_torchtally_decorators_on_ignite_engine(ws):
    labels, scores, _ = DATA
    pred = scores.argmax(dim=1)
    hits = int((pred == labels % 2).sum())
    for out in results(ws):
        value, counts = out["ignite_tally"]
        assert value[:4] == (hits, torch.bincount(labels, minlength=C).tolist(), N, N - hits)
        assert value[4] == pytest.approx(float(scores[:, 1].sum()), rel=1e-12)
        assert value[5] == float(scores[:, 0].max())
        # the 6 attributes (int64 sums, a float64 sum, a float64 max) in the header: one pass ...
        assert counts == {HEADER: 1}
        # ... where ignite's own decorators make one all_reduce per attribute (6; ignite adds one
        # more, once, when it first detects the process group), with the same result.
        own_value, own_counts = out["ignite_own"]
        assert set(own_counts) == {"all_reduce"} and own_counts["all_reduce"] >= 6
        assert own_value[:4] == value[:4] and own_value[5] == value[5]


@pytest.mark.parametrize("ws", [2, 3, 4])
def test_mismatched_declarations_raise_sync_error_on_every_rank(ws):
    for rank, out in enumerate(results(ws)):
        message = out["mismatch"]["error"]
        assert message is not None, f"rank {rank} did not raise"
        assert "before any data was exchanged" in message
        assert "rank 0 has [SumMetric.counts: sum int64 (5,)]" in message
        assert "has [SumMetric.counts: sum int64 (4,)]" in message
        assert "all_reduce" not in out["mismatch"]["counts"]

        message = out["bent"]["error"]
        assert f"rank {ws - 1}: state 'SumMetric.counts' changed shape" in message
        assert "all_reduce" not in out["bent"]["counts"]
        if rank == ws - 1:
            assert "got shape (6,)" in message
        assert_same(out["after_errors"], reference(ws, "all")["sum"])


@pytest.mark.parametrize("ws", [2, 3, 4])
def test_a_rejected_batch_on_one_rank_stops_the_sync_on_every_rank(ws):
    for rank, out in enumerate(results(ws)):
        for key in ("rejected", "rejected_collection"):
            seen = out[key]
            if rank == 0:
                assert seen["kind"] == "ValueError" and seen["error"].startswith("target: label 7"), seen
            else:
                assert seen["kind"] == "SyncError", seen
                assert "rank(s) [0] stopped the sync" in seen["error"], seen
            assert "all_reduce" not in seen["counts"] and seen["seconds"] < 30, seen  # no data, no timeout
        assert_same(out["after_rejection"], reference(ws, "all")["sum"])


@pytest.mark.parametrize("ws", [3, 4])
def test_sync_over_a_subgroup_with_a_recipient_inside_it(ws):
    coll = MetricCollection({"sum": SumMetric(), "cat": CatMetric()})
    for rank in (0, 2):
        feed(coll, *shard(ws, rank, "all"))
    want = coll.compute()
    runs = results(ws)
    assert "subgroup" not in runs[1]
    assert runs[0]["subgroup"][0] is None
    assert_same(runs[2]["subgroup"][0], want["sum"])
    for rank in (0, 2):
        assert_same(runs[rank]["subgroup"][1], want["cat"])


def test_missing_rank_raises_sync_error_naming_it_on_every_live_rank():
    runs = results(3)
    assert runs[2]["missing"] is None  # the rank that stayed away
    for rank in (0, 1):
        missing = runs[rank]["missing"]
        assert missing["error"] is not None and missing["missing_ranks"] == [2], missing
        assert "rank(s) [2] did not reach this sync" in missing["error"]
        # Bounded by the 2 s sync timeout plus the check-in grace, not by gloo's own timeout
        # (240 s here): this is a no-hang bound, not a speed claim.
        assert missing["seconds"] < 30


def test_state_dicts_from_4_ranks_merged_resume_on_2_ranks():
    whole = reference(4, "all")
    assert reference(2, "all").keys() == whole.keys()
    for rank, out in enumerate(results(2)):
        assert_same(out["restored"], whole, f"rank {rank}")
