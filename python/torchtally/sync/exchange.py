"""How a gloo group's sync headers travel (torchtally.sync.protocol, step 1): by all_to_all, or along a
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
rank's *vote* (the CPUs it may run on, the machine's, a hash of its CPU mask, and any choice
forced through TORCHTALLY_HEADER_EXCHANGE) and which machine it runs on, and after a group's
first header exchange whose ranks agree on the plan, every rank reads the same choice off the
same table (choose_ring). The choice holds for that process group object from the next sync on;
a new process group (made by every rank together) chooses again. A process that cannot read its
TORCHTALLY_HEADER_EXCHANGE votes auto and raises the ValueError at each of its syncs, as an error
of its own that its header announces, so that the other ranks raise at once too (torchtally.sync.protocol's
``local_error``) instead of waiting for it until the timeout. After a header exchange that failed
or timed out, the ranks may not all have learnt the choice (nor, with the ring, taken every
message posted for it): make a new process group before syncing over it again.
"""

import hashlib
import os
import socket
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence

import torch
import torch.distributed

from . import dist
from .header import HOST, VOTE

EXCHANGE_ENV = "TORCHTALLY_HEADER_EXCHANGE"
AUTO, ALL_TO_ALL, RING = 0, 1, 2  # a vote's forced choice: auto, or the exchange named in EXCHANGE_ENV
_FORCED = {"": AUTO, "auto": AUTO, "all_to_all": ALL_TO_ALL, "ring": RING}
# A vote: forced choice << 48 | a hash of this process's CPU mask << 32 | the host's CPUs << 16 |
# the CPUs in the mask (16 bits each, counts capped).
_FIELD = 0xFFFF
# The ring's messages carry this tag, so that a user's own point-to-point messages between the
# same ranks (tag 0 by default) are never taken for a header, nor a header for one of theirs.
RING_TAG = 0x7A11


@dataclass
class Route:
    """A group's exchange: this process's header words for the choice, and the choice once the
    ranks have made it."""

    vote: int
    host: int  # which machine this process runs on (host_word)
    ring: Optional[bool] = None  # None until the group's first agreed header exchange: all_to_all
    problem: Optional[str] = None  # why this process could not read its EXCHANGE_ENV

    def error(self) -> Optional[ValueError]:
        """This process's unreadable choice of exchange, as an error of its own for the sync to
        announce and raise (a new one each time: a raised error keeps its traceback)."""
        return ValueError(self.problem) if self.problem is not None else None

    def learn(self, table: List[List[int]], agree: bool) -> None:
        """Make the choice from a header table every rank holds, on the group's first header
        exchange whose ranks agree on the plan (a table from a peer of another protocol version
        has other words where the votes are)."""
        if self.ring is None and agree:
            self.ring = choose_ring([row[HOST] for row in table], [row[VOTE] for row in table])


def route_of(info: dist.GroupInfo) -> Route:
    """The Route of the group ``info`` describes, made on its first sync."""
    route = info.shared.get("route")
    if route is None:
        try:
            made = Route(vote(), host_word())
        except ValueError as exc:
            made = Route(vote(AUTO), host_word(), problem=str(exc))
        route = info.shared.setdefault("route", made)  # one route, also when two threads race here
    return route


def forced_choice() -> int:
    """The exchange EXCHANGE_ENV forces (AUTO when unset); ValueError for anything else."""
    name = os.environ.get(EXCHANGE_ENV, "").strip().lower()
    if name not in _FORCED:
        raise ValueError(f"{EXCHANGE_ENV} must be one of 'auto', 'all_to_all', 'ring'; got {name!r}")
    return _FORCED[name]


def vote(forced: Optional[int] = None) -> int:
    """This process's header word for the choice (see _FIELD); ``forced`` defaults to
    forced_choice()."""
    try:
        mask = sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # no affinity on this platform: every CPU
        mask = list(range(os.cpu_count() or 1))
    mask_hash = int.from_bytes(hashlib.blake2b(repr(mask).encode(), digest_size=2).digest(), "little")
    host_cpus = max(os.cpu_count() or 1, len(mask))
    choice = forced_choice() if forced is None else forced
    return choice << 48 | mask_hash << 32 | min(host_cpus, _FIELD) << 16 | min(len(mask), _FIELD)


def host_word() -> int:
    """A 62-bit id of the machine this process runs on: the kernel's boot id, which processes in
    different containers of one machine share (as they share its cores), else the host name."""
    try:
        with open("/proc/sys/kernel/random/boot_id", "rb") as f:
            key = f.read().strip()
    except OSError:
        key = socket.gethostname().encode()
    return int.from_bytes(hashlib.blake2b(key, digest_size=8).digest(), "little") >> 2


def choose_ring(hosts: Sequence[int], votes: Sequence[int]) -> bool:
    """Whether the group takes the ring, from every rank's host word and vote (one per rank, as
    the header table holds them: the same inputs, so the same answer, on every rank). A forced
    choice decides (the ring over the all_to_all where ranks force both). Otherwise the ring is
    taken where some machine runs more of the group's ranks than they have CPUs: the CPUs of
    their mask when all of them there share one mask (ranks started alike, or by a launcher
    that confines them together), the machine's when their masks differ (ranks bound to CPUs of
    their own)."""
    if len(votes) < 2:
        return False  # nothing to exchange
    forced = max(v >> 48 for v in votes)
    if forced != AUTO:
        return forced == RING
    on_host: Dict[int, List[int]] = {}
    for host, v in zip(hosts, votes):
        on_host.setdefault(host, []).append(v)
    for here in on_host.values():
        one_mask = len({v >> 32 & _FIELD for v in here}) == 1
        cpus = min((v & _FIELD) if one_mask else (v >> 16 & _FIELD) for v in here)
        if len(here) > cpus:
            return True
    return False


def ring(
    table: torch.Tensor, words: int, rank: int, ranks: Sequence[int], group: Optional[Any], deadline: float
) -> None:
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
