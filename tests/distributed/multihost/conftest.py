"""The two_hosts fixture: a fresh pair of network namespaces per test, removed afterwards even
when the test fails; stale pairs of crashed earlier runs are swept first."""

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # two_hosts, two_host_job

import two_hosts  # noqa: E402


@pytest.fixture
def host_pair():
    why = two_hosts.cannot_make_namespaces()
    if why is not None:
        pytest.skip(f"two-host tests need Linux network namespaces: {why}")
    two_hosts.sweep_stale()
    pair = two_hosts.make_pair()
    try:
        yield pair
    finally:
        pair.close()


@pytest.fixture
def start_job(host_pair, tmp_path):
    """start_job(scenario, sync_timeout_s) -> a running two_hosts.Job; both nodes are killed
    at the end of the test, whatever happened."""
    jobs = []

    def start(scenario: str, sync_timeout_s: float) -> two_hosts.Job:
        out = tmp_path / f"{scenario}-{len(jobs)}"
        out.mkdir()
        jobs.append(two_hosts.Job(host_pair, scenario, out, sync_timeout_s))
        return jobs[-1]

    try:
        yield start
    finally:
        for job in jobs:
            job.close()
