"""Shared tester: runs any metric through its whole life cycle, in one process and on 3 ranks.

Usage (in a test module under tests/; this module is importable as ``support.metric_tester``)::

    import functools
    from support.metric_tester import MetricCase, check_metric, run_distributed_cases, assert_rejects

    CASES = [
        MetricCase(
            "mse",
            functools.partial(MeanSquaredError, squared=False),   # picklable factory
            batches=[(preds[i:i + 8], target[i:i + 8]) for i in range(0, 50, 8)],
            reference=lambda p, t: sklearn.metrics.root_mean_squared_error(t, p),
            rtol=1e-9, atol=1e-12,
        ),
    ]

    @pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
    def test_lifecycle(case):
        check_metric(case)

    @pytest.mark.distributed
    def test_distributed():
        run_distributed_cases(CASES)          # ONE 3-rank gloo run for all the cases

A ``MetricCase`` holds:

* ``factory``: a zero-argument callable returning a fresh Metric (or MetricCollection). It is
  sent to the spawned ranks, so it must be picklable: a class or a ``functools.partial`` of one,
  ``CollectionFactory(name=factory, ...)`` for a MetricCollection, or a function defined at
  module level of an importable module (not a lambda).
* ``batches``: the per-batch positional ``update`` arguments, each a tuple (a bare value is
  taken as a 1-tuple). Tensors are sent to the ranks by value.
* ``reference``: the expected result over all the data, called in this process only (so a
  lambda is fine). By default it gets the batches' arguments concatenated position by position
  (tensors along dim 0, 0-d tensors and Python numbers stacked into a 1-D tensor);
  with ``reference_on_batches=True`` it gets the list of batches instead. It may return
  tensors, numpy arrays, Python numbers, or tuples/lists/dicts of them; None skips the
  comparison with a reference (the consistency checks still run).
* ``rtol`` / ``atol``: tolerance for comparisons of floating results with the reference and
  between differently ordered accumulations (merge, distributed). Integer results are compared
  exactly. NaN equals NaN.
* ``allow_empty_rank``: whether the distributed check may give a rank no batch at all.
* ``sharded_reference``: only for metrics whose merged result is NOT the result over the
  concatenated data (e.g. RunningMean: each rank keeps its own window). Called as
  ``sharded_reference(shards)`` with ``shards[i]`` the list of batches that part/rank i saw,
  it gives the expected result of merge_state / a sync; it then replaces the single-process
  expectation in check 4 and in the distributed check.

``check_metric(case)`` (one process) asserts, naming the case and the check on failure:
  1. update with every batch, then compute == reference;
  2. a second compute returns an identical result;
  3. compute after the first half of the batches == reference on that half, and updating after
     that compute gives the full result (compute must not disturb the state);
  4. merge_state of three metrics fed uneven, disjoint parts (one part empty) == one metric
     fed everything; the merged-in metrics are unchanged;
  5. state_dict / load_state_dict into a fresh metric gives the identical result; a state_dict
     saved halfway, loaded, then fed the rest gives the full result;
  6. pickle, copy.deepcopy and clone give the identical result, and updating a copy leaves
     the original's state unchanged;
  7. reset, then compute warns (torchmetrics' rule) or, within raising_if_never_updated(), raises
     NotComputableError (ignite's); feeding everything again gives the result.

``run_distributed_cases(cases, world_size=3)`` makes ONE run on a gloo process group (the
3 ranks support.rank_pools keeps for the session) and, for every
case and every shard layout, gives each rank a contiguous, uneven shard of the batches (global
order = rank order; in one layout a rank gets none when ``allow_empty_rank``), updates with the
first half of each shard, computes, updates with the rest, computes twice. It then asserts in
this process that every rank's results equal a single process fed the same data (and the final
one the reference; or, when given, ``sharded_reference`` of the ranks' shards), that the second
compute is identical, and that each rank's local state is exactly what that rank alone
accumulated (sync never mutates local state); for a case with ``max_collectives``, that the final
compute issued at least one and at most that many collectives. All cases are checked; one AssertionError lists
every failing case, layout and rank. A rank that raises fails the run with that rank's traceback
(torchtally.testing.RankPool's rule); ``timeout`` bounds the whole run. The ranks start
with this process's sys.path, so modules under tests/ (this one included) import there too.

``assert_rejects(metric, args, exc_type, match)`` checks that ``metric.update(*args)`` raises
``exc_type`` with a message matching ``match`` and leaves the state unchanged.
"""

import copy
import dataclasses
import pickle
import re
import warnings
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Type

import numpy as np
import torch

from support.rank_pools import run_on_ranks
from torchtally import MetricCollection, NotComputableError
from torchtally.testing import count_collectives

Batch = Tuple[Any, ...]


@dataclasses.dataclass
class MetricCase:
    """One metric configuration with its data and expected result (see the module docstring)."""

    name: str
    factory: Callable[[], Any]
    batches: Sequence[Any]
    reference: Optional[Callable[..., Any]] = None
    rtol: float = 1e-7
    atol: float = 1e-9
    allow_empty_rank: bool = True
    reference_on_batches: bool = False
    sharded_reference: Optional[Callable[[List[List[Batch]]], Any]] = None
    # for a metric whose state records the rank that updated it: (state fed in one process, rank)
    # -> the state that rank holds (the distributed check's local-state comparison)
    local_state_of_rank: Optional[Callable[[Dict[str, torch.Tensor], int], Dict[str, torch.Tensor]]] = None
    # the most collectives one synced compute may issue (the distributed check counts the final
    # compute's on every rank and asserts at least 1 and at most this); None: not counted
    max_collectives: Optional[int] = None

    def __post_init__(self) -> None:
        self.batches = [b if isinstance(b, tuple) else (b,) for b in self.batches]
        if not self.batches:
            raise ValueError(f"MetricCase '{self.name}': batches must not be empty")

    def expected(self, batches: Sequence[Batch]) -> Any:
        if self.reference_on_batches:
            return self.reference(list(batches))
        return self.reference(*concat_batches(batches))


class CollectionFactory:
    """A picklable factory of a fresh MetricCollection: ``CollectionFactory(r2=R2Score,
    ev=functools.partial(ExplainedVariance, num_outputs=3))`` (each value a metric factory)."""

    def __init__(self, **factories: Callable[[], Any]) -> None:
        self.factories = factories

    def __call__(self) -> Any:
        from torchtally import MetricCollection

        return MetricCollection({name: make() for name, make in self.factories.items()})

    def __repr__(self) -> str:
        return f"CollectionFactory({', '.join(self.factories)})"


# -- helpers ----------------------------------------------------------------------------------


def made_in_float64(factory: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """factory(*args, **kwargs) made while torch's default dtype is float64, so its results are
    float64 (as a torchmetrics metric made then); picklable through functools.partial, so cases
    built on it run on spawned ranks too."""
    previous = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        return factory(*args, **kwargs)
    finally:
        torch.set_default_dtype(previous)


def concat_batches(batches: Sequence[Batch]) -> Tuple[Any, ...]:
    """The batches' arguments joined position by position (tensors along dim 0; scalars stacked)."""
    columns = []
    for values in zip(*batches):
        first = values[0]
        if isinstance(first, torch.Tensor) and first.dim() > 0:
            columns.append(torch.cat(values))
        elif isinstance(first, torch.Tensor):
            columns.append(torch.stack(values))
        elif isinstance(first, (int, float, bool)):
            columns.append(torch.tensor(values))
        else:
            columns.append(list(values))
    return tuple(columns)


def feed(metric: Any, batches: Sequence[Batch]) -> Any:
    for batch in batches:
        metric.update(*batch)
    return metric


def _as_tensor(value: Any) -> torch.Tensor:
    if isinstance(value, torch.Tensor):
        return value.detach().cpu()
    # Through numpy, so that Python floats stay float64 (torch.as_tensor would make float32).
    return torch.from_numpy(np.array(value))


def assert_same(actual: Any, expected: Any, rtol: float = 0.0, atol: float = 0.0, what: str = "result") -> None:
    """Recursive comparison of results: dicts by key, sequences by position, leaves as tensors.

    Integer/bool leaves must match exactly; floating leaves within rtol/atol (0: bit-identical
    values), NaN == NaN. Shapes must match (a 0-d result equals a 1-element reference).
    """
    if isinstance(expected, dict):
        assert isinstance(actual, dict), f"{what}: expected a dict, got {type(actual).__name__}"
        assert actual.keys() == expected.keys(), f"{what}: keys {list(actual)} != {list(expected)}"
        for key in expected:
            assert_same(actual[key], expected[key], rtol, atol, f"{what}[{key!r}]")
        return
    if isinstance(expected, (list, tuple)) and not _numeric_list(expected):
        assert isinstance(actual, (list, tuple)), f"{what}: expected a sequence, got {type(actual).__name__}"
        assert len(actual) == len(expected), f"{what}: length {len(actual)} != {len(expected)}"
        for i, (a, e) in enumerate(zip(actual, expected)):
            assert_same(a, e, rtol, atol, f"{what}[{i}]")
        return
    a, e = _as_tensor(actual), _as_tensor(expected)
    if a.numel() == 1 and e.numel() == 1:
        a, e = a.reshape(()), e.reshape(())
    assert a.shape == e.shape, f"{what}: shape {tuple(a.shape)} != expected {tuple(e.shape)}"
    exact = not (a.is_floating_point() or e.is_floating_point())
    if exact:
        assert torch.equal(a.long(), e.long()), f"{what}: {a} != expected {e}"
        return
    torch.testing.assert_close(
        a.double(), e.double(), rtol=rtol, atol=atol, equal_nan=True, msg=lambda m: f"{what}: {m}"
    )


def _numeric_list(value: Any) -> bool:
    return len(value) > 0 and all(isinstance(v, (int, float, bool)) for v in value)


def states_of(metric: Any) -> Dict[str, torch.Tensor]:
    """Copies of every state, by name; in a collection "<key>.<state>" for the owner of each
    shared state (the first metric of each compute group)."""
    if isinstance(metric, MetricCollection):
        owners = [group[0] for group in metric.compute_groups.values()]
        return {f"{n}.{k}": v.clone() for n in owners for k, v in metric[n].metric_state.items()}
    return {k: v.clone() for k, v in metric.metric_state.items()}


_state = states_of


def saved_states(metric: Any) -> Dict[str, torch.Tensor]:
    """state_dict() with the states in it (torchmetrics leaves them out unless persistent)."""
    metric.persistent(True)
    try:
        return metric.state_dict()
    finally:
        metric.persistent(False)


def loaded(metric: Any, state_dict: Dict[str, torch.Tensor]) -> Any:
    metric.load_state_dict(state_dict)
    return metric


def assert_states_equal(actual: Dict[str, torch.Tensor], expected: Dict[str, torch.Tensor], what: str) -> None:
    assert actual.keys() == expected.keys(), f"{what}: state names {list(actual)} != {list(expected)}"
    for key in expected:
        a, e = actual[key], expected[key]
        assert a.dtype == e.dtype and a.shape == e.shape, (
            f"{what}: state '{key}' is {a.dtype} {list(a.shape)}, expected {e.dtype} {list(e.shape)}"
        )
        same = torch.equal(a, e)
        if not same and a.is_floating_point():  # NaN counts as equal to NaN in the same place
            nan = torch.isnan(a)
            same = torch.equal(nan, torch.isnan(e)) and torch.equal(a[~nan], e[~nan])
        assert same, f"{what}: state '{key}' changed: {a} != {e}"


def assert_rejects(metric: Any, args: Batch, exc_type: Type[BaseException], match: str) -> None:
    """update(*args) raises exc_type matching ``match`` (re.search) and the state is unchanged."""
    before = _state(metric)
    updated = metric._updated if hasattr(metric, "_updated") else None
    try:
        metric.update(*args)
    except exc_type as exc:
        assert re.search(match, str(exc)), f"error message {str(exc)!r} does not match {match!r}"
    else:
        raise AssertionError(f"{type(metric).__name__}.update did not raise {exc_type.__name__}")
    assert_states_equal(_state(metric), before, f"{type(metric).__name__} after a rejected update")
    if updated is not None:
        assert metric._updated == updated, "a rejected update changed whether the metric counts as updated"


def split_uneven(n: int, parts: int, empty: Optional[int]) -> List[Tuple[int, int]]:
    """Contiguous [lo, hi) bounds of ``parts`` uneven parts of n items; part ``empty`` gets none.

    Part i gets about (i + 1) shares, and at least one item while n allows, so sizes differ.
    """
    shares = [0 if i == empty else i + 1 for i in range(parts)]
    counts = [n * s // sum(shares) for s in shares]
    filled = [i for i in range(parts) if shares[i]]
    counts[filled[-1]] += n - sum(counts)
    for i in filled:
        largest = max(range(parts), key=lambda k: counts[k])
        if counts[i] == 0 and counts[largest] > 1:
            counts[largest] -= 1
            counts[i] += 1
    bounds, lo = [], 0
    for c in counts:
        bounds.append((lo, lo + c))
        lo += c
    return bounds


# -- single process -------------------------------------------------------------------------


def check_metric(case: MetricCase) -> None:
    """Run the single-process checks 1-7 (module docstring) on ``case``."""
    batches = case.batches
    tol = dict(rtol=case.rtol, atol=case.atol)
    name = case.name

    full = feed(case.factory(), batches)
    result = full.compute()
    if case.reference is not None:
        assert_same(result, case.expected(batches), what=f"[{name}] compute vs reference", **tol)
    assert_same(full.compute(), result, what=f"[{name}] second compute")

    half = (len(batches) + 1) // 2
    m = feed(case.factory(), batches[:half])
    first = m.compute()
    if case.reference is not None:
        assert_same(first, case.expected(batches[:half]), what=f"[{name}] compute on the first half", **tol)
    halfway_state = saved_states(m)
    feed(m, batches[half:])
    assert_same(m.compute(), result, what=f"[{name}] update after compute", **tol)

    parts = [case.factory() for _ in range(3)]
    shards = [list(batches[lo:hi]) for lo, hi in split_uneven(len(batches), 3, empty=1)]
    for part, shard in zip(parts, shards):
        feed(part, shard)
    others_before = [_state(p) for p in parts[1:]]
    parts[0].merge_state(parts[1:])
    merged = result if case.sharded_reference is None else case.sharded_reference(shards)
    assert_same(parts[0].compute(), merged, what=f"[{name}] merge_state", **tol)
    for i, (p, before) in enumerate(zip(parts[1:], others_before)):
        assert_states_equal(_state(p), before, f"[{name}] merge_state changed merged-in metric {i + 1}")

    assert_same(loaded(case.factory(), saved_states(full)).compute(), result, what=f"[{name}] load_state_dict")
    resumed = feed(loaded(case.factory(), halfway_state), batches[half:])
    assert_same(resumed.compute(), result, what=f"[{name}] load_state_dict halfway, then update", **tol)

    fresh = feed(case.factory(), batches)  # copies of a metric that has not computed yet
    copies = {"pickle": pickle.loads(pickle.dumps(fresh)), "deepcopy": copy.deepcopy(fresh), "clone": fresh.clone()}
    for how, dup in copies.items():
        assert_same(dup.compute(), result, what=f"[{name}] {how}")
    before = _state(fresh)
    copies["clone"].update(*batches[0])
    assert_states_equal(_state(fresh), before, f"[{name}] updating a clone changed the original")
    assert_same(pickle.loads(pickle.dumps(full)).compute(), result, what=f"[{name}] pickle after compute")

    full.reset()
    with full.raising_if_never_updated():
        try:
            full.compute()
        except NotComputableError:
            pass
        else:
            raise AssertionError(f"[{name}] compute after reset did not raise NotComputableError (ignite's rule)")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            full.compute()  # torchmetrics' rule: a warning, then the value over no data (or its own error)
        except (ValueError, NotComputableError):
            pass
    assert any("update" in str(w.message) for w in caught), f"[{name}] compute after reset did not warn"
    assert_same(feed(full, batches).compute(), result, what=f"[{name}] after reset and a new epoch")


# -- distributed ------------------------------------------------------------------------------


# Shard layouts per world size: (name, index of the rank that gets no batch or None).
def _layouts(case: MetricCase, world_size: int) -> List[Tuple[str, Optional[int]]]:
    layouts = [("uneven", None)]
    if case.allow_empty_rank and world_size > 1:
        layouts.append(("empty-rank", world_size // 2))  # a middle rank, to test rank-order concat
    return layouts


def _phases(bounds: Tuple[int, int]) -> Tuple[Tuple[int, int], Tuple[int, int]]:
    lo, hi = bounds
    mid = lo + (hi - lo + 1) // 2
    return (lo, mid), (mid, hi)


def _rank_worker(rank: int, world_size: int, payload: List[Tuple[str, Any, List[Batch], List]]) -> List[Dict]:
    """Runs on every rank: each case under each layout; returns what it computed and held."""
    out = []
    for name, factory, batches, layouts in payload:
        for layout, empty in layouts:
            bounds = split_uneven(len(batches), world_size, empty)[rank]
            (a, b), (c, d) = _phases(bounds)
            try:
                metric = feed(factory(), batches[a:b])
                first = metric.compute()
                feed(metric, batches[c:d])
                with count_collectives() as counter:
                    final = metric.compute()
                again = metric.compute()
            except Exception as exc:
                raise RuntimeError(
                    f"case '{name}', layout '{layout}', rank {rank}: {type(exc).__name__}: {exc}"
                ) from exc
            out.append(
                {
                    "case": name,
                    "layout": layout,
                    "first": first,
                    "final": final,
                    "again": again,
                    "collectives": counter.total,
                    "state": _state(metric),
                }
            )
    return out


def run_distributed_cases(cases: Sequence[MetricCase], world_size: int = 3, timeout: float = 300.0) -> None:
    """The distributed check for all ``cases`` in ONE gloo run (module docstring).

    Every case is checked; one AssertionError then lists every case that failed.
    """
    names = [c.name for c in cases]
    if len(set(names)) != len(names):
        raise ValueError(f"run_distributed_cases: case names must be unique, got {names}")
    for c in cases:
        if not c.allow_empty_rank and len(c.batches) < world_size:
            raise ValueError(f"case '{c.name}': allow_empty_rank=False needs at least {world_size} batches")
    layouts = {c.name: _layouts(c, world_size) for c in cases}
    payload = [(c.name, c.factory, list(c.batches), layouts[c.name]) for c in cases]
    per_rank = run_on_ranks(_rank_worker, world_size, payload, timeout=timeout)
    by_case = {c.name: c for c in cases}
    failures = []
    for row_index, row in enumerate(per_rank[0]):
        case = by_case[row["case"]]
        try:
            _check_distributed_row(case, row["layout"], [ranks[row_index] for ranks in per_rank], world_size)
        except AssertionError as exc:
            failures.append(str(exc))
    if failures:
        raise AssertionError(f"{len(failures)} distributed check(s) failed:\n" + "\n".join(failures))


def _check_distributed_row(case: MetricCase, layout: str, rows: List[Dict], world_size: int) -> None:
    batches, tol = case.batches, dict(rtol=case.rtol, atol=case.atol)
    empty = dict(_layouts(case, world_size))[layout]
    bounds = split_uneven(len(batches), world_size, empty)
    firsts = [list(batches[a:b]) for (a, b), _ in map(_phases, bounds)]
    if case.sharded_reference is not None:
        expected_first = case.sharded_reference(firsts)
        expected_final = case.sharded_reference([list(batches[lo:hi]) for lo, hi in bounds])
        reference = None
    else:
        expected_first = feed(case.factory(), [batch for part in firsts for batch in part]).compute()
        expected_final = feed(case.factory(), batches).compute()
        reference = case.expected(batches) if case.reference is not None else None
    for rank, row in enumerate(rows):
        what = f"[{case.name}, {layout}, rank {rank}]"
        assert_same(row["first"], expected_first, what=f"{what} first compute vs one process", **tol)
        assert_same(row["final"], expected_final, what=f"{what} final compute vs one process", **tol)
        if reference is not None:
            assert_same(row["final"], reference, what=f"{what} final compute vs reference", **tol)
        assert_same(row["again"], row["final"], what=f"{what} repeated compute")
        if case.max_collectives is not None:
            assert 1 <= row["collectives"] <= case.max_collectives, f"{what} {row['collectives']} collectives"
        local = feed(case.factory(), batches[bounds[rank][0] : bounds[rank][1]])
        want = _state(local) if case.local_state_of_rank is None else case.local_state_of_rank(_state(local), rank)
        assert_states_equal(row["state"], want, f"{what} local state after sync")
