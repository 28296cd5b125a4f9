"""The choice of a gloo group's header exchange (torchtally.sync_exchange): every rank reads it
off the same header table, so these are plain functions of the table's address and vote words.
The exchange itself, on real ranks: tests/distributed/test_sync_small.py (exchange "ring")."""
import os
import socket
import struct

import pytest

from torchtally import sync_exchange
from torchtally.sync_exchange import ALL_TO_ALL, AUTO, EXCHANGE_ENV, RING, choose_ring


def address(ip: str, port: int) -> int:
    """A roll-call address word (torchtally.rollcall): IPv4 << 16 | port."""
    return struct.unpack("!I", socket.inet_aton(ip))[0] << 16 | port


def vote(cores: int, forced: int = AUTO) -> int:
    return forced << 32 | cores


A, B = "10.0.0.1", "10.0.0.2"


def test_a_core_per_rank_keeps_the_all_to_all():
    addresses = [address(A, 5000 + r) for r in range(4)]
    assert not choose_ring(addresses, [vote(4)] * 4)
    assert not choose_ring(addresses, [vote(64)] * 4)


def test_more_ranks_than_cores_on_a_host_takes_the_ring():
    addresses = [address(A, 5000 + r) for r in range(4)]
    assert choose_ring(addresses, [vote(2)] * 4)
    assert choose_ring(addresses, [vote(3)] * 4)


def test_hosts_are_counted_apart_and_the_fewest_cores_there_count():
    # two ranks on each of two hosts: two cores each are enough on both
    addresses = [address(A, 1), address(A, 2), address(B, 1), address(B, 2)]
    assert not choose_ring(addresses, [vote(2)] * 4)
    # one rank on host B may use one core only (its affinity): B is short of cores
    assert choose_ring(addresses, [vote(2), vote(2), vote(2), vote(1)])
    # three ranks on host A with two cores, one on B with many
    addresses = [address(A, 1), address(A, 2), address(A, 3), address(B, 1)]
    assert choose_ring(addresses, [vote(2), vote(2), vote(2), vote(64)])


def test_a_rank_with_no_address_counts_on_no_host():
    assert not choose_ring([0, 0, 0, 0], [vote(1)] * 4)
    assert not choose_ring([address(A, 1), 0, 0], [vote(1)] * 3)


def test_a_forced_choice_on_any_rank_decides_and_the_ring_wins_a_conflict():
    short = [address(A, 5000 + r) for r in range(4)]
    assert not choose_ring(short, [vote(1, ALL_TO_ALL)] + [vote(1)] * 3)
    assert choose_ring(short, [vote(64), vote(64), vote(64, RING), vote(64)])
    assert choose_ring(short, [vote(64, ALL_TO_ALL), vote(64, RING), vote(64), vote(64)])


def test_the_vote_says_the_cores_this_process_may_use_and_the_forced_choice(monkeypatch):
    monkeypatch.delenv(EXCHANGE_ENV, raising=False)
    cores = len(os.sched_getaffinity(0))
    assert sync_exchange.vote() == vote(cores)
    for name, forced in (("ring", RING), ("all_to_all", ALL_TO_ALL), ("auto", AUTO), (" Ring ", RING)):
        monkeypatch.setenv(EXCHANGE_ENV, name)
        assert sync_exchange.vote() == vote(cores, forced), name
    monkeypatch.setenv(EXCHANGE_ENV, "tree")
    with pytest.raises(ValueError, match=f"{EXCHANGE_ENV} must be one of 'auto', 'all_to_all', 'ring'; got 'tree'"):
        sync_exchange.vote()
