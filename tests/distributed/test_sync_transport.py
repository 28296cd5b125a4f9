"""The sync engine's transport hook (torchtally.sync.transport.register_transport), which the nccl
backend plugs into, exercised on the CPU with a recording transport over gloo: 2 real processes, one
spawned run for every check.

A registered transport must carry every data collective of a sync (one all_reduce per packed
(dtype, op) group, one byte all_gather) while the header stays on torch.distributed; results
must equal those of torch.distributed alone, also with a recipient rank; a transport whose wait
fails must give the sync's usual SyncError on every rank; unregistering restores the default.
"""

import datetime

import pytest
import torch

from torchtally.testing import run_distributed

pytestmark = pytest.mark.distributed


class RecordingTransport:
    """Moves data with torch.distributed functions captured at construction, so that
    count_collectives (which wraps the module's functions later) sees only what the sync itself
    sends through torch.distributed."""

    device = torch.device("cpu")

    def __init__(self, fail: bool = False) -> None:
        import torch.distributed as td

        self.calls = []
        self.fail = fail
        self._all_reduce = td.all_reduce
        self._all_gather = getattr(td, "all_gather_single", None) or td.all_gather_into_tensor

    def all_reduce(self, buf, op=None, group=None, async_op=True):
        self.calls.append(("all_reduce", str(buf.dtype), buf.numel(), str(op)))
        if self.fail:
            return _FailingWork()
        return self._all_reduce(buf, op=op, group=group, async_op=True)

    def all_gather_flat(self, out, inp, group=None, async_op=True):
        self.calls.append(("all_gather", str(inp.dtype), inp.numel(), out.numel()))
        return self._all_gather(out, inp, group=group, async_op=True)


class _FailingWork:
    def wait(self, timeout: datetime.timedelta = None) -> bool:
        raise TimeoutError("the transport gave up (test)")


def transport_checks(rank: int, world_size: int) -> dict:
    from torchtally import SyncError
    from torchtally.sync.plan import StateSpec, SyncPlan
    from torchtally.sync.protocol import sync_states
    from torchtally.sync.transport import register_transport, transport_for, unregister_transport
    from torchtally.testing import count_collectives

    plan = SyncPlan(
        [
            StateSpec("counts", "sum", torch.int64, (3,)),
            StateSpec("hits", "sum", torch.int32, (2,)),
            StateSpec("worst", "max", torch.float32, (1,)),
            StateSpec("rows", "cat", torch.float32, (2,)),
        ]
    )
    values = [
        torch.tensor([rank, 1, 10 * rank]),
        torch.tensor([rank, 2], dtype=torch.int32),
        torch.tensor([float(rank) - 0.5]),
        torch.full((rank + 1, 2), float(rank)),
    ]
    seen = {}
    assert transport_for(None) is None

    with count_collectives() as counter:
        plain = sync_states(plan, values)
    seen["plain_collectives"] = counter.total

    transport = RecordingTransport()
    register_transport(None, transport)
    seen["registered"] = transport_for(None) is transport
    with count_collectives() as counter:
        routed = sync_states(plan, values)
    seen["routed_collectives"] = dict(counter.by_name)
    seen["calls"] = list(transport.calls)
    seen["equal"] = all(torch.equal(a, b) for a, b in zip(plain, routed))
    seen["results"] = [t.tolist() for t in routed]

    transport.calls.clear()
    to_one = sync_states(plan, values, recipient=1)
    seen["recipient"] = None if to_one is None else all(torch.equal(a, b) for a, b in zip(plain, to_one))
    seen["recipient_calls"] = [c[0] for c in transport.calls]

    register_transport(None, RecordingTransport(fail=True))
    try:
        sync_states(plan, values, timeout_s=2.0)
        seen["failure"] = None
    except SyncError as exc:
        seen["failure"] = str(exc)

    seen["unregistered"] = isinstance(unregister_transport(None), RecordingTransport)
    with count_collectives() as counter:
        again = sync_states(plan, values)
    seen["after_collectives"] = counter.total
    seen["after_equal"] = all(torch.equal(a, b) for a, b in zip(plain, again))
    return seen


@pytest.fixture(scope="module")
def runs():
    return run_distributed(transport_checks, 2, timeout=90.0)


def test_the_transport_carries_every_data_collective(runs):
    for seen in runs:
        assert seen["registered"]
        assert seen["plain_collectives"] == 4  # header, int64 sum (counts + hits), float32 max, cat gather
        assert seen["routed_collectives"] == {"all_to_all_single": 1}  # the header alone (gloo's all_to_all)
        kinds = [(c[0], c[1]) for c in seen["calls"]]
        assert kinds == [("all_reduce", "torch.int64"), ("all_reduce", "torch.float32"), ("all_gather", "torch.uint8")]
        assert seen["calls"][0][2] == 5  # counts (3) and hits (2) packed into one int64 buffer
        assert "MAX" in seen["calls"][1][3].upper()


def test_results_equal_torch_distributed(runs):
    for seen in runs:
        assert seen["equal"]
        counts, hits, worst, rows = seen["results"]
        assert counts == [1, 2, 10] and hits == [1, 4] and worst == [0.5]
        assert rows == [[0.0, 0.0], [1.0, 1.0], [1.0, 1.0]]  # rank 0's one row, then rank 1's two


def test_recipient_rank(runs):
    assert runs[0]["recipient"] is None and runs[1]["recipient"] is True
    for seen in runs:  # the transport reduces and gathers everywhere; rank 0 drops the result
        assert seen["recipient_calls"] == ["all_reduce", "all_reduce", "all_gather"]


def test_a_failing_transport_gives_a_sync_error_on_every_rank(runs):
    for seen in runs:
        assert seen["failure"] is not None
        assert "failed in the data collectives" in seen["failure"] and "the transport gave up (test)" in seen["failure"]


def test_unregistering_restores_torch_distributed(runs):
    for seen in runs:
        assert seen["unregistered"] and seen["after_collectives"] == 4 and seen["after_equal"]
