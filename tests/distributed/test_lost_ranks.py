"""A lost rank is always named, and where it was lost, without the store:

* rank 0, which hosts the TCPStore, dies before its first sync: the survivors name it, also
  where no rank shares its node (the store's refused port says its process is gone);
* rank 0 fails with the others and exits at once (taking the store with it) before a slower
  survivor's sync has failed: that survivor still names the rank that stayed away, not rank 0;
* after a completed header, one rank stops (SIGSTOP) inside its data all_reduce and another
  stalls (alive) inside that call: the survivors name both, and how each was lost.

Every survivor's SyncError comes within sync_timeout + 10 s (a no-hang bound, not a speed claim).
"""

import json
import os
import signal
import time

import pytest
import torch
import torch.distributed as dist

from torchtally import CatMetric, MetricCollection, SumMetric
from torchtally.errors import SyncError
from torchtally.testing import RankDied, run_distributed

pytestmark = pytest.mark.distributed

TIMEOUT_S = 2.0


def _metrics():
    return MetricCollection({"sum": SumMetric(), "cat": CatMetric()}, sync_timeout=TIMEOUT_S)


def _failed_compute(coll):
    start = time.monotonic()
    try:
        coll.compute()
    except SyncError as exc:
        return {
            "error": str(exc),
            "missing": exc.missing_ranks,
            "lost_at": exc.lost_at,
            "stage": exc.stage,
            "seconds": time.monotonic() - start,
        }
    return {"error": None}


def store_host_dies_before_the_first_sync(rank, world_size):
    dist.barrier()  # every rank has joined the process group (no torchtally sync has run)
    coll = _metrics()
    coll.update(torch.tensor([float(rank)]))
    if rank == 0:
        os._exit(3)  # the TCPStore goes with it
    return _failed_compute(coll)


def test_store_host_dying_before_the_first_sync_is_named():
    died, *survivors = run_distributed(store_host_dies_before_the_first_sync, 3, timeout=120, return_exceptions=True)
    assert isinstance(died, RankDied) and died.exitcode == 3
    for out in survivors:
        assert out["missing"] == [0], out
        assert out["lost_at"][0].startswith("did not reach this sync"), out
        assert "rank(s) [0] did not reach this sync" in out["error"]
        assert out["stage"] == "header"
        assert out["seconds"] < TIMEOUT_S + 10


def store_host_dies_on_another_node(rank, world_size):
    """As if each rank ran on a node of its own (no shared node registry): rank 0, which hosts
    the store, exits before its first sync; rank 2 stays away in other code. Rank 1 can read no
    address from the dead store, but the store's refused port names rank 0."""
    os.environ.update(LOCAL_RANK="0", LOCAL_WORLD_SIZE="1")
    dist.barrier()
    coll = _metrics()
    coll.update(torch.tensor([float(rank)]))
    if rank == 0:
        os._exit(3)
    if rank == 2:
        time.sleep(2 * TIMEOUT_S + 6)  # away until rank 1 has given up
        return "stayed away"
    return _failed_compute(coll)


def test_store_host_dying_on_another_node_is_named():
    died, out, away = run_distributed(store_host_dies_on_another_node, 3, timeout=120, return_exceptions=True)
    assert isinstance(died, RankDied) and died.exitcode == 3
    assert away == "stayed away"
    assert out["missing"] == [0], out
    assert out["lost_at"][0].startswith("did not reach this sync (its process is gone: it hosted the store"), out
    assert "rank(s) [2] could not be asked" in out["error"], out  # alive, but nothing knows its address
    assert out["seconds"] < TIMEOUT_S + 10


def early_leaver_and_late_survivor(rank, world_size, report_path):
    """Rank 2 stays away from the sync (alive, in other code). Rank 0 fails first and exits at
    once; rank 1 joined the sync a second later, so its own timeout fires after rank 0 is gone
    (the order that used to lose the naming)."""
    coll = _metrics()
    coll.update(torch.tensor([float(rank)]))
    coll.compute()  # one good sync first: the process group works
    coll.update(torch.tensor([1.0]))
    if rank == 2:
        time.sleep(2 * TIMEOUT_S + 4)  # in other code well past both others' errors
        return "stayed away"
    if rank == 1:
        time.sleep(1.0)
    out = _failed_compute(coll)
    if rank == 0:
        # Leave the result in a file and exit at once: the store and rank 0's roll-call service go.
        with open(report_path, "w") as f:
            json.dump(out, f)
        os._exit(0)
    return out


def test_a_survivor_that_exits_right_after_its_error_is_not_named_in_its_place(tmp_path):
    report = tmp_path / "rank0.json"
    exited, late, away = run_distributed(
        early_leaver_and_late_survivor, 3, str(report), timeout=120, return_exceptions=True
    )
    assert isinstance(exited, RankDied) and exited.exitcode == 0 and away == "stayed away"
    first = json.loads(report.read_text())
    first["lost_at"] = {int(k): v for k, v in first["lost_at"].items()}
    for out in (first, late):
        assert out["missing"] == [2], out
        assert "rank(s) [2] did not reach this sync (it answered from other code" in out["error"], out
        assert out["lost_at"][2].startswith("did not reach this sync"), out
        assert out["seconds"] < TIMEOUT_S + 10


def _stall_in_all_reduce(how):
    original = dist.all_reduce

    def stalled(*args, **kwargs):
        if how == "stop":
            os.kill(os.getpid(), signal.SIGSTOP)  # frozen: answers nothing until SIGCONT
        else:
            time.sleep(TIMEOUT_S + 5)  # alive, answering, but stuck in the call
        return original(*args, **kwargs)

    dist.all_reduce = stalled


def stalls_in_the_data_all_reduce(rank, world_size):
    store = dist.distributed_c10d._get_default_store()
    store.set(f"test/pid/{rank}", str(os.getpid()))
    coll = _metrics()
    coll.update(torch.tensor([float(rank)]))
    if rank == 1:
        _stall_in_all_reduce("stop")
    if rank == 2:
        _stall_in_all_reduce("sleep")
    out = _failed_compute(coll)
    if rank == 0:
        store.wait(["test/done/3"])
        os.kill(int(store.get("test/pid/1")), signal.SIGCONT)
    if rank == 3:
        store.set("test/done/3", "1")
    return out


def test_ranks_stalled_inside_the_data_all_reduce_are_named_with_how():
    runs = run_distributed(stalls_in_the_data_all_reduce, 4, timeout=120, return_exceptions=True)
    for rank in (0, 3):
        out = runs[rank]
        assert out["missing"] == [1, 2], out
        assert out["stage"] == "data collectives"  # the header completed: every rank reached the sync
        assert out["lost_at"][1].startswith("was lost in the data collectives, after the header"), out
        assert "no answer" in out["lost_at"][1]
        assert out["lost_at"][2].startswith("stalled inside its data all_reduce/all_gather call"), out
        assert "did not reach" not in out["error"]
        assert out["seconds"] < TIMEOUT_S + 10
