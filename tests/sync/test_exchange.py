"""The choice of a gloo group's header exchange (torchtally.sync.exchange): every rank reads it
off the same header table, so it is a plain function of the table's host and vote words. The
exchange itself, on real ranks: tests/distributed/test_sync_small.py (exchange "ring")."""

import os

import pytest

from torchtally.sync import exchange
from torchtally.sync.exchange import ALL_TO_ALL, AUTO, EXCHANGE_ENV, RING, Route, choose_ring

A, B = 11, 22  # host words of two machines


def vote(cpus: int, host_cpus: int = 64, mask: int = 7, forced: int = AUTO) -> int:
    """A vote as exchange.vote lays it out: ``cpus`` in this process's mask (hashed to
    ``mask``), ``host_cpus`` on its machine."""
    return forced << 48 | mask << 32 | host_cpus << 16 | cpus


def test_a_cpu_per_rank_keeps_the_all_to_all():
    assert not choose_ring([A] * 4, [vote(4)] * 4)
    assert not choose_ring([A] * 4, [vote(64)] * 4)


def test_more_ranks_than_the_cpus_they_share_takes_the_ring():
    assert choose_ring([A] * 4, [vote(2, host_cpus=2)] * 4)
    assert choose_ring([A] * 4, [vote(3)] * 4)  # confined together to 3 of the machine's 64


def test_ranks_bound_to_cpus_of_their_own_count_the_machines_cpus():
    # 8 ranks, each bound to 4 CPUs of its own on a 32-CPU machine: no CPU is short
    assert not choose_ring([A] * 8, [vote(4, host_cpus=32, mask=m) for m in range(8)])
    # 8 ranks on their own CPUs of a 4-CPU machine: short
    assert choose_ring([A] * 8, [vote(1, host_cpus=4, mask=m) for m in range(8)])


def test_machines_are_counted_apart():
    # two ranks on each of two machines: two CPUs each are enough on both
    assert not choose_ring([A, A, B, B], [vote(2)] * 4)
    # host B confines its two ranks to one CPU
    assert choose_ring([A, A, B, B], [vote(2), vote(2), vote(1, mask=3), vote(1, mask=3)])
    # three ranks on A with two CPUs, one on B with many
    assert choose_ring([A, A, A, B], [vote(2)] * 3 + [vote(64)])


def test_a_forced_choice_on_any_rank_decides_and_the_ring_wins_a_conflict():
    short = [vote(1, host_cpus=1)] * 4
    assert not choose_ring([A] * 4, [vote(1, host_cpus=1, forced=ALL_TO_ALL)] + short[1:])
    assert choose_ring([A] * 4, [vote(64), vote(64), vote(64, forced=RING), vote(64)])
    assert choose_ring([A] * 4, [vote(64, forced=ALL_TO_ALL), vote(64, forced=RING), vote(64), vote(64)])


def test_a_group_of_one_never_takes_the_ring():
    assert not choose_ring([A], [vote(1, host_cpus=1, forced=RING)])


def test_the_vote_says_the_cpus_the_mask_and_the_forced_choice(monkeypatch):
    monkeypatch.delenv(EXCHANGE_ENV, raising=False)
    mine = exchange.vote()
    assert mine & 0xFFFF == len(os.sched_getaffinity(0))
    assert mine >> 16 & 0xFFFF == max(os.cpu_count(), len(os.sched_getaffinity(0)))
    assert mine >> 48 == AUTO
    for name, forced in (("ring", RING), ("all_to_all", ALL_TO_ALL), ("auto", AUTO), (" Ring ", RING)):
        monkeypatch.setenv(EXCHANGE_ENV, name)
        assert exchange.vote() == mine & ((1 << 48) - 1) | forced << 48, name
    monkeypatch.setenv(EXCHANGE_ENV, "tree")
    with pytest.raises(ValueError, match=f"{EXCHANGE_ENV} must be one of 'auto', 'all_to_all', 'ring'; got 'tree'"):
        exchange.vote()
    assert 0 < exchange.host_word() < 1 << 62 and exchange.host_word() == exchange.host_word()


def test_the_choice_is_learnt_once_and_only_from_a_table_the_ranks_agree_on():
    from torchtally.sync.header import HOST, VOTE

    def table(votes):
        rows = [[0] * 8 for _ in votes]
        for row, v in zip(rows, votes):
            row[HOST], row[VOTE] = A, v
        return rows

    route = Route(vote(64), A)
    route.learn(table([vote(1, host_cpus=1)] * 3), agree=False)  # plans differ: the words may be others
    assert route.ring is None
    route.learn(table([vote(1, host_cpus=1)] * 3), agree=True)
    assert route.ring is True
    route.learn(table([vote(64)] * 3), agree=True)  # chosen once: later tables change nothing
    assert route.ring is True
    assert Route(vote(64), A).error() is None
    err = Route(vote(64), A, problem="bad value").error()
    assert isinstance(err, ValueError) and str(err) == "bad value"
