"""Parity with torchmetrics: the same class, the same inputs, the same numbers.

Usage (in a test module under tests/; importable as ``support.parity_tester``)::

    import functools
    import torchmetrics.classification as tm
    import torchtally.classification as tt
    from support.parity_tester import ParityCase, check_parity, run_parity_distributed

    CASES = [
        ParityCase(
            "multiclass_acc_macro",
            ours=functools.partial(tt.MulticlassAccuracy, 5, average="macro"),
            theirs=functools.partial(tm.MulticlassAccuracy, 5, average="macro"),
            batches=[(preds[i:i + 16], target[i:i + 16]) for i in range(0, 96, 16)],
        ),
    ]

    @pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
    def test_parity(case):
        check_parity(case)

    @pytest.mark.distributed
    def test_parity_distributed():
        run_parity_distributed(CASES, world_size=2)   # ONE gloo run for all cases

``ours`` / ``theirs``: zero-argument factories (picklable for the distributed run: a class or a
``functools.partial`` of one). ``batches``: positional ``update`` arguments per batch.
``exact=True``: results compared with torch.equal (counts); otherwise floats within ``rtol`` /
``atol`` (NaN equals NaN). Results may be tensors or (nested) tuples, lists and dicts of them;
dtypes and shapes must match too unless ``check_dtype=False``.

``check_parity(case)`` asserts, naming the case and the step:
  1. ``forward`` on each batch returns torchmetrics' forward value for that batch;
  2. ``compute`` after those forwards equals torchmetrics' compute;
  3. a fresh metric fed every batch through ``update`` computes the same as well;
  4. ``update_count`` counts the batches, as torchmetrics does.

``run_parity_distributed(cases, world_size)`` gives each rank an uneven, contiguous shard of the
batches (rank order = batch order; with ``world_size`` > 2 one middle rank gets none when the
case allows it), updates, computes (a sync) and asserts that every rank's result equals
torchmetrics' over all the batches in one process, and that the ranks agree exactly.
"""

import dataclasses
from typing import Any, Callable, Dict, List, Sequence, Tuple

import torch

from support.rank_pools import run_on_ranks

Batch = Tuple[Any, ...]


@dataclasses.dataclass
class ParityCase:
    name: str
    ours: Callable[[], Any]
    theirs: Callable[[], Any]
    batches: Sequence[Batch]
    exact: bool = False
    rtol: float = 1e-6
    atol: float = 1e-6
    check_dtype: bool = True
    forward: bool = True
    allow_empty_rank: bool = True

    def __post_init__(self) -> None:
        self.batches = [b if isinstance(b, tuple) else (b,) for b in self.batches]


def assert_parity(
    got: Any,
    want: Any,
    what: str,
    exact: bool = False,
    rtol: float = 1e-6,
    atol: float = 1e-6,
    check_dtype: bool = True,
) -> None:
    """``got`` (torchtally) equals ``want`` (torchmetrics): structure, dtype, shape, values."""
    kw = dict(exact=exact, rtol=rtol, atol=atol, check_dtype=check_dtype)
    if isinstance(want, dict):
        assert isinstance(got, dict) and sorted(got) == sorted(want), f"{what}: keys {sorted(got)} != {sorted(want)}"
        for key in want:
            assert_parity(got[key], want[key], f"{what}[{key!r}]", **kw)
        return
    if isinstance(want, (tuple, list)):
        assert isinstance(got, (tuple, list)) and len(got) == len(want), (
            f"{what}: got {type(got).__name__} of {len(got) if hasattr(got, '__len__') else '?'}, "
            f"expected {type(want).__name__} of {len(want)}"
        )
        for i, (g, w) in enumerate(zip(got, want)):
            assert_parity(g, w, f"{what}[{i}]", **kw)
        return
    if isinstance(want, str):
        assert got == want, f"{what}: {got!r} != {want!r}"
        return
    if not isinstance(want, torch.Tensor):
        want = torch.as_tensor(want)
        check_dtype = False
    assert isinstance(got, torch.Tensor), f"{what}: got {type(got).__name__}, expected a tensor"
    if check_dtype:
        assert got.dtype == want.dtype, f"{what}: dtype {got.dtype}, expected {want.dtype}"
    assert got.shape == want.shape, f"{what}: shape {tuple(got.shape)}, expected {tuple(want.shape)}"
    got, want = got.detach().cpu(), want.detach().cpu()
    if exact or not (got.is_floating_point() or want.is_floating_point()):
        got = got.to(want.dtype)
        same = torch.equal(got, want)
        if not same and want.is_floating_point():  # NaN equals NaN in the same place
            nan = torch.isnan(want)
            same = torch.equal(torch.isnan(got), nan) and torch.equal(got[~nan], want[~nan])
        assert same, f"{what}: {got} != {want}"
        return
    torch.testing.assert_close(
        got.double(),
        want.double(),
        rtol=rtol,
        atol=atol,
        equal_nan=True,
        msg=lambda m: f"{what}: {m}\n got {got}\n want {want}",
    )


def _tolerance(case: ParityCase) -> Dict[str, Any]:
    return dict(exact=case.exact, rtol=case.rtol, atol=case.atol, check_dtype=case.check_dtype)


def torchmetrics_result(case: ParityCase) -> Any:
    """torchmetrics' compute over all the batches, in one process."""
    theirs = case.theirs()
    for batch in case.batches:
        theirs.update(*batch)
    return theirs.compute()


def check_parity(case: ParityCase) -> None:
    tol = _tolerance(case)
    if case.forward:
        ours, theirs = case.ours(), case.theirs()
        for i, batch in enumerate(case.batches):
            assert_parity(ours(*batch), theirs(*batch), f"[{case.name}] forward on batch {i}", **tol)
        assert_parity(ours.compute(), theirs.compute(), f"[{case.name}] compute after forward", **tol)
        assert ours.update_count == theirs.update_count == len(case.batches), f"[{case.name}] update_count"
    ours = case.ours()
    for batch in case.batches:
        ours.update(*batch)
    assert_parity(ours.compute(), torchmetrics_result(case), f"[{case.name}] update + compute", **tol)


def shard_bounds(n: int, world_size: int, empty_rank: Any = None) -> List[Tuple[int, int]]:
    """Contiguous [lo, hi) shards of n batches, uneven (rank 0 gets the most); ``empty_rank`` none."""
    ranks = [r for r in range(world_size) if r != empty_rank]
    sizes = [n // len(ranks) + (1 if i < n % len(ranks) else 0) for i in range(len(ranks))]
    if len(ranks) > 1 and n >= 2 * len(ranks) and sizes[0] == sizes[-1]:
        sizes[0], sizes[-1] = sizes[0] + 1, sizes[-1] - 1  # make the shards uneven
    bounds, lo = {}, 0
    for r, size in zip(ranks, sizes):
        bounds[r] = (lo, lo + size)
        lo += size
    return [bounds.get(r, (lo, lo)) for r in range(world_size)]


def _empty_rank(case: ParityCase, world_size: int) -> Any:
    return world_size // 2 if case.allow_empty_rank and world_size > 2 else None


def _parity_worker(
    rank: int, world_size: int, payload: List[Tuple[str, Callable[[], Any], List[Batch], Any]]
) -> List[Any]:
    out = []
    for name, factory, batches, empty in payload:
        lo, hi = shard_bounds(len(batches), world_size, empty)[rank]
        try:
            metric = factory()
            for batch in batches[lo:hi]:
                metric.update(*batch)
            out.append(metric.compute())
        except Exception as exc:
            raise RuntimeError(f"case '{name}', rank {rank}: {type(exc).__name__}: {exc}") from exc
    return out


def run_parity_distributed(cases: Sequence[ParityCase], world_size: int = 2, timeout: float = 300.0) -> None:
    """Every case's synced result on ``world_size`` gloo ranks equals torchmetrics' over all the
    data in one process; every failing case is listed in one AssertionError."""
    names = [c.name for c in cases]
    if len(set(names)) != len(names):
        raise ValueError(f"run_parity_distributed: case names must be unique, got {names}")
    payload = [(c.name, c.ours, list(c.batches), _empty_rank(c, world_size)) for c in cases]
    per_rank = run_on_ranks(_parity_worker, world_size, payload, timeout=timeout)
    failures = []
    for i, case in enumerate(cases):
        try:
            want = torchmetrics_result(case)
            for rank in range(world_size):
                assert_parity(per_rank[rank][i], want, f"[{case.name}] rank {rank} of {world_size}", **_tolerance(case))
                assert_parity(per_rank[rank][i], per_rank[0][i], f"[{case.name}] rank {rank} vs rank 0", exact=True)
        except AssertionError as exc:
            failures.append(str(exc))
    if failures:
        raise AssertionError(
            f"{len(failures)} of {len(cases)} distributed parity case(s) failed:\n" + "\n".join(failures)
        )
