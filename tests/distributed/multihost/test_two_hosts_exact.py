"""Synced results across two "hosts" (two network namespaces joined by a veth pair, one
torchrun node of 2 processes in each, gloo over that link) equal one process's over the whole
dataset, exactly; and the roll call of every rank listens on the link's address (the one named
by GLOO_SOCKET_IFNAME, and without it, the one the route to MASTER_ADDR leaves from)."""

import pytest
import torch
import two_hosts
from two_host_job import dataset, one_process_results

pytestmark = pytest.mark.distributed


def test_synced_results_across_two_hosts_equal_one_process(start_job):
    job = start_job("exact", sync_timeout_s=60)
    runs = job.results(range(4), timeout_s=120)
    assert job.wait_exit(timeout_s=60) == [0, 0], job.logs()
    expected = one_process_results()
    probs, target = dataset()
    counts = torch.bincount(target * 5 + probs.argmax(dim=1), minlength=25).reshape(5, 5)
    assert expected["confmat"] == counts.tolist()  # the reference itself is right
    for rank, run in runs.items():
        assert run["results"] == expected, f"rank {rank}"
        own_address = two_hosts.ADDRESSES[rank // two_hosts.PROCS_PER_NODE]
        assert run["rollcall_ip"] == own_address, f"rank {rank}"
        assert run["by_route"] == own_address, f"rank {rank}: without GLOO_SOCKET_IFNAME"
