"""How a gloo group's sync headers travel (torchtally.sync, step 1): by all_to_all, or along a
ring of point-to-point messages when a host runs more of the group's ranks than it has cores.

An all_to_all is one round: every rank sends its header to every other at once, W - 1 messages
each, all in flight together. With a core per rank that is the fastest exchange there is. On a
host with fewer cores than ranks it is the slowest (benchmarks/RESULTS.md, "The header exchange
on a host with fewer cores than ranks"): every rank wakes at once, its threads queue behind
the other ranks' for the cores, and a wake-up that waits out another process's time slice adds
milliseconds. The ring wakes one rank at a time: rank 0 sends its header to rank 1, which adds
its own and passes the rows on, up to rank W - 1, which then holds every row; the rows each rank
still lacks go round once more (W - 1 → 0 → 1 → ... → W - 2). 2(W - 1) messages in all, at most
four per rank, one in flight at a time; so it takes longer than the all_to_all where cores are
free, and far less time where they are not.

The choice must be the same on every rank (a rank in an all_to_all and another in the ring would
wait for each other until the timeout), so no rank makes it alone: every header carries this
rank's *vote* (its usable cores, and any choice forced through TORCHTALLY_HEADER_EXCHANGE), and
after a group's first header exchange every rank reads the same choice off the same table. A
choice forced on any rank decides (``ring`` over ``all_to_all`` where ranks force both);
otherwise the ring is taken when some host (the address in the roll-call word,
torchtally.rollcall) holds more of the group's ranks than the fewest cores any of them may use.
The choice holds for that process group object from the next sync on; a new process group (made
by every rank together) chooses again. A process that cannot read its TORCHTALLY_HEADER_EXCHANGE
votes auto and raises the ValueError at each of its syncs, as an error of its own that its header
announces, so that the other ranks raise at once too (torchtally.sync's ``local_error``) instead
of waiting for it until the timeout.
"""
import os
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence, Tuple

import torch
import torch.distributed

from . import dist

EXCHANGE_ENV = "TORCHTALLY_HEADER_EXCHANGE"
AUTO, ALL_TO_ALL, RING = 0, 1, 2  # a vote's forced choice: auto, or the exchange named in EXCHANGE_ENV
_FORCED = {"": AUTO, "auto": AUTO, "all_to_all": ALL_TO_ALL, "ring": RING}
_CORE_BITS = 32  # a vote: forced choice << _CORE_BITS | usable cores
# The ring's messages carry this tag, so that a user's own point-to-point messages between the
# same ranks (tag 0 by default) are never taken for a header, nor a header for one of theirs.
RING_TAG = 0x7A11


@dataclass
class Route:
    """A group's exchange: this process's vote, and the choice once the ranks have made it."""

    vote: int
    ring: Optional[bool] = None  # None until the group's first header exchange: all_to_all
    problem: Optional[str] = None  # why this process could not read its EXCHANGE_ENV


def route_of(info: dist.GroupInfo) -> Route:
    """The Route of the group ``info`` describes, made on its first sync."""
    route = info.shared.get("route")
    if route is None:
        try:
            route = Route(vote())
        except ValueError as exc:
            route = Route(AUTO << _CORE_BITS | usable_cores(), problem=str(exc))
        info.shared["route"] = route
    return route


def vote() -> int:
    """This process's header word for the choice: the exchange forced by EXCHANGE_ENV (auto
    when unset; ValueError for anything else), and the cores it may run on."""
    name = os.environ.get(EXCHANGE_ENV, "").strip().lower()
    if name not in _FORCED:
        raise ValueError(f"{EXCHANGE_ENV} must be one of 'auto', 'all_to_all', 'ring'; got {name!r}")
    return _FORCED[name] << _CORE_BITS | usable_cores()


def usable_cores() -> int:
    """The CPUs this process may run on (its affinity; a CPU quota is not seen)."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # no affinity on this platform
        cores = os.cpu_count() or 1
    return min(cores, (1 << _CORE_BITS) - 1)


def choose_ring(addresses: Sequence[int], votes: Sequence[int]) -> bool:
    """Whether the group takes the ring, from every rank's roll-call address word and vote (one
    per rank, as the header table holds them: the same inputs, so the same answer, on every rank).
    A rank with no address (0) counts on no host."""
    forced = max(v >> _CORE_BITS for v in votes)
    if forced != AUTO:
        return forced == RING
    hosts: Dict[int, Tuple[int, int]] = {}  # IPv4 -> (ranks there, fewest cores any of them has)
    for address, v in zip(addresses, votes):
        if address:
            host = address >> 16  # torchtally.rollcall.address_word: IPv4 << 16 | port
            cores = v & ((1 << _CORE_BITS) - 1)
            ranks, fewest = hosts.get(host, (0, cores))
            hosts[host] = (ranks + 1, min(fewest, cores))
    return any(ranks > cores for ranks, cores in hosts.values())


def ring(table: torch.Tensor, words: int, rank: int, ranks: Sequence[int], group: Optional[Any],
         deadline: float) -> None:
    """Fill the flat [W * words] ``table`` with every rank's row along the ring (module docstring),
    this rank's own row (``rank``) being already written and never written to; ``ranks``: the
    group's global ranks in group-rank order. Every wait is bounded by ``deadline``
    (time.monotonic()); a failure or timeout raises as the collective's would."""
    world = len(ranks)
    after, before = ranks[(rank + 1) % world], ranks[(rank - 1) % world]
    sends: List[Any] = []

    def receive(rows: torch.Tensor) -> None:
        dist.wait(torch.distributed.irecv(rows, src=before, group=group, tag=RING_TAG), deadline)

    def send(rows: torch.Tensor) -> None:
        sends.append(torch.distributed.isend(rows, dst=after, group=group, tag=RING_TAG))

    if rank > 0:
        receive(table[: rank * words])  # rows 0 .. rank - 1
    # Rows 0 .. rank on; the last rank, holding them all, starts the second round with rows 1 ..
    send(table[: (rank + 1) * words] if rank < world - 1 else table[words:])
    if rank < world - 1:
        receive(table[(rank + 1) * words :])  # the rows after this rank's
        if rank + 2 < world:
            send(table[(rank + 2) * words :])
    for work in sends:  # the rows must not change before they are sent
        dist.wait(work, deadline)
