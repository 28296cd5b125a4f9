"""torchtally.testing.run_distributed and RankPool: a rank's exception re-raised with its rank, no hang when
a rank never finishes, and every rank's outcome reported (return_exceptions, failure_grace), so
that an error a rank raises well after another rank failed is still seen. Results in rank order
and count_collectives are checked inside tests/distributed/test_sync.py's runs."""

import os
import signal
import time

import pytest
import torch
import torch.distributed

from torchtally.errors import SyncError
from torchtally.testing import RankDied, RankPool, run_distributed

pytestmark = pytest.mark.distributed

LATE_S = 7.0  # longer than the default failure_grace (5 s)


def one_fails_one_hangs(rank, world_size):
    if rank == 1:
        raise ValueError("bad value on purpose")
    time.sleep(600)  # never finishes: run_distributed must kill it


def test_rank_exception_is_reraised_with_rank_and_hung_rank_is_killed():
    start = time.monotonic()
    with pytest.raises(ValueError, match="rank 1: ValueError: bad value on purpose") as info:
        run_distributed(one_fails_one_hangs, 2, timeout=60)
    assert info.value.rank == 1
    assert "ranks [0] did not finish" in str(info.value)
    assert "traceback on rank 1" in str(info.value)
    # Killed after the failure grace, long before the 600 s sleep or the 60 s timeout.
    assert time.monotonic() - start < 45


def every_kind_of_end(rank, world_size):
    """rank 0 fails late (as a sync's SyncError does, after its timeout), rank 1 at once,
    rank 2 is killed by a signal, rank 3 returns a value."""
    if rank == 0:
        time.sleep(LATE_S)
        raise SyncError("late on purpose", missing_ranks=[2], sync_id=7)
    if rank == 1:
        raise ValueError("early on purpose")
    if rank == 2:
        os.kill(os.getpid(), signal.SIGKILL)
    return {"rank": rank}


def test_return_exceptions_reports_every_rank_including_a_late_sync_error():
    outcomes = run_distributed(every_kind_of_end, 4, timeout=120, return_exceptions=True)
    late, early, died, ok = outcomes
    # The late SyncError arrives LATE_S after rank 1 failed: with a kill after the first
    # failure's grace it would be lost. It keeps its message and attributes.
    assert isinstance(late, SyncError) and str(late) == "late on purpose"
    assert late.missing_ranks == [2] and late.sync_id == 7 and late.rank == 0
    assert "every_kind_of_end" in late.remote_traceback
    assert isinstance(early, ValueError) and early.rank == 1 and str(early) == "early on purpose"
    assert isinstance(died, RankDied) and died.rank == 2 and died.exitcode == -signal.SIGKILL
    assert ok == {"rank": 3}


def test_raising_mode_lists_every_other_ranks_outcome_within_the_grace():
    with pytest.raises(SyncError) as info:
        run_distributed(every_kind_of_end, 3, timeout=120, failure_grace=60)
    message = str(info.value)
    assert message.startswith("rank 0: SyncError: late on purpose")  # the lowest failing rank
    assert info.value.rank == 0 and info.value.missing_ranks == [2]
    assert "rank 1: ValueError: early on purpose" in message
    assert f"rank 2: exited with code {-signal.SIGKILL} without a result" in message
    assert "did not finish" not in message


def never_finishes(rank, world_size):
    if rank == 0:
        return "done"
    time.sleep(600)


def test_return_exceptions_turns_a_rank_still_running_at_the_deadline_into_timeout_error():
    start = time.monotonic()
    done, hung = run_distributed(never_finishes, 2, timeout=20, return_exceptions=True)
    assert done == "done"
    assert isinstance(hung, TimeoutError) and hung.rank == 1 and "within 20s" in str(hung)
    assert time.monotonic() - start < 60


def test_bad_failure_grace_is_refused():
    with pytest.raises(ValueError, match="failure_grace"):
        run_distributed(never_finishes, 2, failure_grace=-1)


def pid_and_sum(rank, world_size, value):
    total = torch.tensor([value + rank], dtype=torch.int64)
    torch.distributed.all_reduce(total)
    return os.getpid(), int(total)


def fails_on_rank_1(rank, world_size):
    if rank == 1:
        raise KeyError("rank 1 on purpose")
    return rank


def test_rank_pool_keeps_its_processes_and_group_until_a_run_fails():
    with RankPool(2) as pool:
        first = pool.run(pid_and_sum, 10)
        second = pool.run(pid_and_sum, 20)
        assert [total for _, total in first] == [21, 21]
        assert [total for _, total in second] == [41, 41]
        assert [pid for pid, _ in first] == [pid for pid, _ in second]  # the same processes
        assert first[0][0] != first[1][0]
        with pytest.raises(KeyError, match="rank 1: KeyError"):
            pool.run(fails_on_rank_1)
        assert pool.closed  # a failed run may leave a rank inside a collective: killed
        with pytest.raises(RuntimeError, match="the pool is closed"):
            pool.run(pid_and_sum, 0)
    for pid, _ in first:  # no process outlives the pool
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


def test_the_function_module_and_named_imports_load_before_the_group_is_joined():
    # Libraries such as Avalanche refuse, at import, to build loggers on a non-main rank of an
    # initialised group: fn's module (run_distributed) or ``imports`` (RankPool) come first.
    from tests.support.group_at_import import group_existed_at_import

    assert run_distributed(group_existed_at_import, 2) == [False, False]
    with RankPool(2, imports=["tests.support.group_at_import"]) as pool:
        assert pool.run(group_existed_at_import) == [False, False]
    with RankPool(2) as pool:  # imported by the job's unpickling, after the join
        assert pool.run(group_existed_at_import) == [True, True]
