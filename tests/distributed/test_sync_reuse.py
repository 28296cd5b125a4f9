"""The header buffers a sync reuses from one sync to the next (torchtally.sync.header) never
leak into what a sync returns.

On 2 gloo ranks: a small plan (int, float, int32, bool states and a Python number) synced
twice with different data: the first results are unchanged by the second sync, none of them
shares memory with the pooled buffers, and editing a result in place changes nothing the next
sync returns. A plan that is not small gets correct results through reused buffers too. A sync
whose collective timed out does not hand its buffers back to the pool (gloo may still write
into them): the next sync of that layout gets a new set. Without numpy (a torch built
without it) the buffers write and read the same header words through tensors.
"""

import datetime
from typing import Any, Dict, List

import pytest
import torch
import torch.distributed as dist

import torchtally.sync.dist
from torchtally import SyncError
from torchtally.sync import header
from torchtally.sync.plan import StateSpec, SyncPlan, number_spec
from torchtally.sync.protocol import sync_states
from torchtally.testing import run_distributed

pytestmark = pytest.mark.distributed

SPECS = [
    StateSpec("m.counts", "sum", torch.int64, (3,)),
    StateSpec("m.mass", "sum", torch.float32, (2, 2)),
    StateSpec("m.low", "min", torch.int32, (2,)),
    StateSpec("m.seen", "max", torch.bool, ()),
    number_spec("m.n", "sum"),
]
LARGE = [StateSpec("l.rows", "cat", torch.float32, (2,)), StateSpec("l.total", "sum", torch.int64, ())]


def values_for(rank: int, step: int) -> List[torch.Tensor]:
    k = 10 * step + rank + 1
    return [
        torch.tensor([k, 2 * k, -k]),
        torch.full((2, 2), 0.25 * k, dtype=torch.float32),
        torch.tensor([k, -k], dtype=torch.int32),
        torch.tensor(rank == 1),
        torch.tensor(k),
    ]


def expected(ws: int, step: int) -> List[torch.Tensor]:
    per_rank = [values_for(r, step) for r in range(ws)]
    return [
        sum(v[0] for v in per_rank),
        sum(v[1] for v in per_rank),
        torch.stack([v[2] for v in per_rank]).amin(0),
        torch.tensor(True),
        sum(v[4] for v in per_rank),
    ]


def _storages(buffers: Any) -> List[int]:
    return [buffers.sent.untyped_storage().data_ptr(), buffers.gathered.untyped_storage().data_ptr()]


def _copies(ws: int) -> int:
    """How many copies of its header a rank sends: one per rank for the all_to_all exchange."""
    return ws if torchtally.sync.dist.group_info().direct_header else 1


def run_checks(rank: int, ws: int) -> Dict[str, Any]:
    out: Dict[str, Any] = {}
    plan = SyncPlan(SPECS)
    assert plan.small is not None
    first = sync_states(plan, values_for(rank, 0))
    kept = [t.clone() for t in first]
    second = sync_states(plan, values_for(rank, 1))
    out["first_unchanged"] = all(torch.equal(a, b) for a, b in zip(first, kept))
    out["first"], out["second"] = kept, [t.clone() for t in second]

    pooled = header.take(
        plan.fingerprint, plan.small, plan.small.fields, ws, torch.device("cpu"), plan.shapes, _copies(ws)
    )
    out["pooled_is_the_syncs"] = pooled.read_table()[0][0] == plan.fingerprint  # not a fresh set
    pooled_ptrs = _storages(pooled)
    header.give_back(pooled)
    out["aliases"] = [t.untyped_storage().data_ptr() in pooled_ptrs for t in first + second]
    for t in second:
        t.zero_() if t.dtype != torch.bool else t.logical_not_()
    third = sync_states(plan, values_for(rank, 1))
    out["third"] = [t.clone() for t in third]

    large = SyncPlan(LARGE)
    rows = torch.full((rank + 1, 2), float(rank))
    out["large"] = [[t.clone() for t in sync_states(large, [rows, torch.tensor(step + rank)])] for step in range(2)]

    # A sync that times out: rank 1 never joins it. Its buffers must not return to the pool.
    store = dist.distributed_c10d._get_default_store()
    lonely = SyncPlan([StateSpec("t.c", "sum", torch.int64, (rank + 7,))])  # a layout of its own
    if rank == 1:
        store.wait(["test/reuse/timed-out"], datetime.timedelta(seconds=60))
        return out
    warm = header.take(
        lonely.fingerprint, lonely.small, lonely.small.fields, ws, torch.device("cpu"), lonely.shapes, _copies(ws)
    )
    header.give_back(warm)  # the one set of this layout in the pool: the failing sync takes it
    try:
        sync_states(lonely, [torch.zeros(7, dtype=torch.int64)], timeout_s=1.0)
        out["timed_out"] = False
    except SyncError:
        out["timed_out"] = True
    after = header.take(
        lonely.fingerprint, lonely.small, lonely.small.fields, ws, torch.device("cpu"), lonely.shapes, _copies(ws)
    )
    out["reused_after_failure"] = after is warm
    store.set("test/reuse/timed-out", "1")
    return out


_runs: Dict[int, List[Dict[str, Any]]] = {}


def results() -> List[Dict[str, Any]]:
    if 2 not in _runs:
        _runs[2] = run_distributed(run_checks, 2, timeout=120)
    return _runs[2]


def test_results_stay_correct_and_own_their_memory():
    for rank, out in enumerate(results()):
        assert out["first_unchanged"], rank
        for step, got in ((0, out["first"]), (1, out["second"]), (1, out["third"])):
            for value, want in zip(got, expected(2, step)):
                assert torch.equal(value, want.to(value.dtype)), (rank, step, value, want)
        assert out["first"][2].dtype == torch.int32 and out["first"][3].dtype == torch.bool
        assert out["pooled_is_the_syncs"] and not any(out["aliases"]), (rank, out["aliases"])


def test_a_plan_that_is_not_small_reuses_its_header_correctly():
    for rank, out in enumerate(results()):
        for step, (rows, total) in enumerate(out["large"]):
            assert torch.equal(rows, torch.tensor([[0.0, 0.0], [1.0, 1.0], [1.0, 1.0]])), (rank, rows)
            assert int(total) == 2 * step + 1, (rank, step, total)


def test_a_timed_out_sync_does_not_return_its_buffers():
    out = results()[0]
    assert out["timed_out"]
    assert not out["reused_after_failure"]


def test_without_numpy_the_header_goes_through_tensors(monkeypatch):
    """A torch built without numpy: the buffers fall back to tensor writes and reads, same words."""
    plan = SyncPlan(SPECS)
    words = list(range(1, plan.small.fields + 1))
    with_numpy = header.HeaderBuffers("a", plan.small.fields, 2, torch.device("cpu"), plan.small, plan.shapes, copies=2)

    def no_numpy(self, *args, **kwargs):
        raise RuntimeError("Numpy is not available")

    monkeypatch.setattr(torch.Tensor, "numpy", no_numpy)
    without = header.HeaderBuffers("b", plan.small.fields, 2, torch.device("cpu"), plan.small, plan.shapes, copies=2)
    assert without.words is None and isinstance(without.table, torch.Tensor)
    for buffers in (with_numpy, without):
        buffers.write(words)
        buffers.gathered.copy_(buffers.sent)  # as an all_to_all of this rank's two copies would
        assert buffers.read_table() == [words, words]


def test_a_state_keeps_its_shape_beside_an_empty_one_in_its_group():
    """A small group of several states where one holds nothing: each state still comes back in
    its declared shape (a state filling its group alone is sliced, not taken whole)."""
    specs = [
        StateSpec("m.grid", "sum", torch.float32, (2, 3)),
        StateSpec("m.none", "sum", torch.float32, (0,)),
        StateSpec("m.one", "sum", torch.float64, ()),
    ]
    plan = SyncPlan(specs)
    # a float32 sum group that the grid fills alone, and a float64 one of the 0-dim state
    assert [g.indices for g, _ in plan.small.groups] == [(0, 1), (2,)]
    values = [torch.arange(6.0).view(2, 3), torch.zeros(0), torch.tensor(1.5, dtype=torch.float64)]
    buffers = header.HeaderBuffers("z", plan.small.fields, 2, torch.device("cpu"), plan.small, plan.shapes, copies=2)
    buffers.write([0] * plan.small.fields)
    buffers.pack(values)
    buffers.gathered.copy_(buffers.sent)  # two ranks that sent the same values
    synced = [None] * 3
    buffers.reduce(values, synced, lambda i, exc: exc)
    for got, value in zip(synced, values):
        assert got.shape == value.shape and torch.equal(got, 2 * value), (got, value)


@pytest.mark.parametrize("numpy_views", [True, False])
def test_the_header_write_leaves_no_stale_word(monkeypatch, numpy_views):
    """A reused set writes only the words that changed since its last sync: every copy of the
    message must still hold exactly the header just written, whichever words changed (and the
    data after the fields is never taken for a header word)."""
    plan = SyncPlan(SPECS)
    if not numpy_views:
        monkeypatch.setattr(torch.Tensor, "numpy", lambda self, *a, **k: (_ for _ in ()).throw(RuntimeError("no")))
    buffers = header.HeaderBuffers("w", plan.small.fields, 3, torch.device("cpu"), plan.small, plan.shapes, copies=3)
    n = plan.small.fields
    headers = [
        list(range(1, n + 1)),
        list(range(1, n + 1)),
        [7] + list(range(2, n + 1)),
        [7] * n,
        [-(2**63)] + [2**63 - 1] * (n - 1),
        list(range(1, n + 1)),
    ]
    for step, words in enumerate(headers):
        buffers.pack(values_for(0, step))  # the data words change too, after the fields
        buffers.write(words)
        assert buffers.sent.view(3, -1)[:, :n].tolist() == [words] * 3, (step, words)
