"""torchtally.sync.dist's choices for NCCL groups, without a GPU or NCCL: where the buffers of a
sync go (the states' CUDA device, not whatever device is current), and how a collective is
waited for (polling, never NCCL's wait(timeout), which aborts the user's process group)."""

import time

import pytest
import torch

from torchtally.sync import dist


class CudaState:
    """What device_for looks at on a CUDA state."""

    is_cuda = True

    def __init__(self, index):
        self.device = torch.device("cuda", index)


def nccl_group(bound=None):
    return dist.GroupInfo(size=2, rank=0, ranks=(0, 1), nccl_only=True, direct_header=False, bound_device=bound)


def test_an_nccl_sync_goes_to_its_states_device_even_when_another_is_current(monkeypatch):
    monkeypatch.setattr(torch.cuda, "current_device", lambda: 0)
    on_cpu = torch.zeros(2)
    assert nccl_group().device_for([on_cpu, CudaState(3), CudaState(1)]) == torch.device("cuda", 3)
    assert nccl_group(torch.device("cuda", 2)).device_for([CudaState(5)]) == torch.device("cuda", 5)
    # no CUDA state: the device the group was bound to, then the current device
    assert nccl_group(torch.device("cuda", 2)).device_for([on_cpu]) == torch.device("cuda", 2)
    assert nccl_group().device_for([on_cpu]) == torch.device("cuda", 0)


def test_a_gloo_sync_stays_on_the_cpu():
    gloo = dist.GroupInfo(size=2, rank=0, ranks=(0, 1), nccl_only=False, direct_header=True)
    assert gloo.device_for([CudaState(1)]) == torch.device("cpu")


def test_the_bound_device_is_read_from_the_group():
    class Bound:
        bound_device_id = torch.device("cuda", 1)

    assert dist._bound_device(Bound()) == torch.device("cuda", 1)
    assert dist._bound_device(object()) is None


class Work:
    """A collective that completes after `polls` looks; records how it was waited for."""

    def __init__(self, polls):
        self.polls, self.waits = polls, []

    def is_completed(self):
        self.polls -= 1
        return self.polls < 0

    def wait(self, timeout=None):
        self.waits.append(timeout)
        return True


def test_an_nccl_collective_is_polled_then_waited_for_without_a_timeout():
    work = Work(polls=5)
    dist.wait(work, time.monotonic() + 10, poll=True)
    assert work.waits == [None] and work.polls < 0


def test_an_nccl_timeout_raises_without_waiting_on_the_work():
    work = Work(polls=10**9)
    start = time.monotonic()
    with pytest.raises(TimeoutError, match="did not complete before the sync's deadline"):
        dist.wait(work, start + 0.05, poll=True)
    assert work.waits == [] and time.monotonic() - start < 2  # never work.wait(timeout): no abort


def test_a_gloo_collective_is_waited_for_with_the_remaining_time():
    work = Work(polls=0)
    dist.wait(work, time.monotonic() + 5)
    assert len(work.waits) == 1 and 4 < work.waits[0].total_seconds() <= 5
