"""torchtally.testing.run_distributed: a rank's exception re-raised with its rank, and no hang
when a rank never finishes (one spawned run covers both). Results in rank order and
count_collectives are checked inside tests/distributed/test_sync.py's runs."""
import time

import pytest
from torchtally.testing import run_distributed

pytestmark = pytest.mark.distributed


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
