"""Real faults between two "hosts" (two network namespaces joined by a veth pair, one torchrun
node of 2 processes in each, gloo over that link): a whole node killed before compute, the link
taken down while every rank is inside a sync (a partition), a node slower than sync_timeout.
Every surviving rank raises SyncError naming the lost ranks, and where each was lost, within
sync_timeout + 10 s (a no-hang bound, not a speed claim); nothing hangs: each rank's result is
awaited with a deadline, and both nodes are killed at the end of every test.

The partition and the slow node can only be named as they are because the survivors' roll call
reaches the other namespace: a service bound to 127.0.0.1 would be refused ("gone") there.
"""

import re

import pytest
from two_host_job import one_process_results

pytestmark = pytest.mark.distributed

SYNC_TIMEOUT_S = 5.0
NODE_A, NODE_B = [0, 1], [2, 3]
RESULT_WAIT_S = 90  # bounds the test: startup of both nodes and the faulted sync


def check_names(run, lost, how):
    assert run["error"] is not None, run
    assert run["missing"] == lost, run
    assert sorted(int(r) for r in run["lost_at"]) == lost, run
    for r in lost:
        assert run["lost_at"][str(r)].startswith(how), run
    assert f"rank(s) {lost} {how}" in run["error"], run
    assert run["seconds"] < SYNC_TIMEOUT_S + 10, run


def test_a_node_killed_before_compute_is_named(host_pair, start_job):
    job = start_job("node_dies", SYNC_TIMEOUT_S)
    job.wait_for([f"ready{r}" for r in range(4)], RESULT_WAIT_S)
    host_pair.kill_node(1)  # every process of node B: its torchrun agent and both ranks
    job.signal_file("go")
    runs = job.results(NODE_A, RESULT_WAIT_S)
    for rank in NODE_A:
        check_names(runs[rank], NODE_B, "did not reach this sync")
        assert runs[rank]["stage"] == "header", runs[rank]


def test_a_partition_inside_a_sync_is_named_on_both_sides(host_pair, start_job):
    job = start_job("partition", SYNC_TIMEOUT_S)
    job.wait_for([f"held{r}" for r in range(4)], RESULT_WAIT_S)  # every header done
    host_pair.take_link_down()
    job.signal_file("go")
    runs = job.results(range(4), RESULT_WAIT_S)
    for rank, run in runs.items():
        other_node = NODE_B if rank in NODE_A else NODE_A
        # Its own node's other rank answered over the roll call; the other node's did not.
        check_names(run, other_node, "was lost in the data collectives, after the header every rank sent (no answer")
        assert run["stage"] != "header", run


def test_a_node_slower_than_sync_timeout_is_named(start_job):
    job = start_job("slow_node", SYNC_TIMEOUT_S)
    runs = job.results(range(4), RESULT_WAIT_S)
    expected = one_process_results()
    for rank, run in runs.items():
        assert run["first"] == expected, f"rank {rank}: the sync before the fault"
    for rank in NODE_A:
        # Node B's ranks answered the roll call from the other namespace, busy elsewhere.
        check_names(
            runs[rank],
            NODE_B,
            "did not reach this sync (it answered from other code: its last sync over this group was #1)",
        )
    for rank in NODE_B:  # late: node A gave up this sync and told node B so; B fails too, it does not hang
        run = runs[rank]
        assert run["error"] is not None and run["seconds"] < SYNC_TIMEOUT_S + 10, run
        failed_too = re.search(
            r"rank\(s\) \[([\d, ]+)\] failed in this sync too \(they told this rank so", run["error"]
        )
        assert failed_too and set(NODE_A) <= {int(r) for r in failed_too.group(1).split(",")}, run
        assert not set(NODE_A) & set(run["missing"]), run  # they reached it: not named as lost
