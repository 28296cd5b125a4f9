"""Thin helpers over torch.distributed for the sync protocol (torchtally.sync.protocol).

Everything here answers sensibly when torch.distributed is unavailable or not initialised
(world size 1, rank 0) and never runs a collective. Collectives themselves live in protocol.py;
this file holds the bookkeeping around them: timeouts, the device the collectives use, sync
numbers and the default store (where torchtally.sync.rollcall registers each rank's address).
"""

import datetime
import time
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

import torch
import torch.distributed

# A rank that is merely slower than its peers (a longer shard, a checkpoint being written)
# must not be reported as missing, so the default is generous; torch's own default for a
# process group is 30 minutes.
DEFAULT_SYNC_TIMEOUT_S = 300.0

TimeoutLike = Union[float, int, datetime.timedelta]


def initialized() -> bool:
    """True when torch.distributed is built in and a default process group exists."""
    return torch.distributed.is_available() and torch.distributed.is_initialized()


def world_size(group: Optional[Any] = None) -> int:
    """Size of ``group`` (the default group when None); 1 when nothing is initialised."""
    if not initialized():
        return 1
    return torch.distributed.get_world_size(group)


def rank(group: Optional[Any] = None) -> int:
    """This process's rank within ``group``; 0 when nothing is initialised."""
    if not initialized():
        return 0
    return torch.distributed.get_rank(group)


def global_rank() -> int:
    return rank(None)


def needs_sync(group: Optional[Any] = None) -> bool:
    """True when a sync over ``group`` has other ranks to talk to. Asked at every compute: the
    size of a group that has synced before comes from group_info's cache, not from c10d."""
    pg = _process_group(group)
    if pg is None:
        return False
    info = _cached_info_of(pg)
    return (info.size if info is not None else world_size(group)) > 1


def timeout_seconds(value: Optional[TimeoutLike], *, name: str = "sync_timeout") -> float:
    """Normalise a timeout given as seconds or a timedelta; None means the default."""
    if value is None:
        return DEFAULT_SYNC_TIMEOUT_S
    if isinstance(value, datetime.timedelta):
        seconds = value.total_seconds()
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        seconds = float(value)
    else:
        raise TypeError(f"{name} must be seconds (int/float) or a datetime.timedelta, got {type(value).__name__}")
    if not seconds > 0:
        raise ValueError(f"{name} must be > 0 seconds, got {seconds}")
    return seconds


def group_ranks(group: Optional[Any] = None) -> List[int]:
    """Global ranks of the members of ``group``, in group-rank order."""
    if group is None:
        return list(range(world_size(None)))
    return list(torch.distributed.get_process_group_ranks(group))


def global_rank_of(group: Optional[Any], group_rank: int) -> int:
    """Global rank of the member with rank ``group_rank`` in ``group``."""
    if group is None:
        return group_rank
    return torch.distributed.get_global_rank(group, group_rank)


_CPU = torch.device("cpu")


@dataclass(frozen=True)
class GroupInfo:
    """What a sync needs to know about its process group (looked up once per group)."""

    size: int
    rank: int
    ranks: Tuple[int, ...]  # global ranks, in group-rank order
    nccl_only: bool  # collectives need CUDA buffers
    direct_header: bool  # the sync header travels by all_to_all or a ring (torchtally.sync.exchange)
    # What the syncs over this process group keep from one to the next (torchtally.sync.exchange's
    # route); it lives as long as the group object, so a new group starts afresh on every rank.
    shared: Dict[str, Any] = field(default_factory=dict, compare=False, hash=False, repr=False)

    bound_device: Optional[torch.device] = None  # an NCCL group's device_id, when it was given one

    def device_for(self, values: Sequence[Any] = ()) -> torch.device:
        """Where this group's collectives need their buffers: the CPU, or for an NCCL group the
        CUDA device of the states being synced (the first CUDA one), else the device the group
        was bound to (init_process_group(device_id=...)), else the current CUDA device. Asked at
        each sync: a rank that never called torch.cuda.set_device still syncs on its states'
        GPU, not on cuda:0."""
        if not self.nccl_only:
            return _CPU
        for v in values:
            if getattr(v, "is_cuda", False):
                return v.device
        if self.bound_device is not None:
            return self.bound_device
        return torch.device("cuda", torch.cuda.current_device())


_group_infos: Dict[int, Tuple[Any, GroupInfo]] = {}

# Up to this many ranks, a gloo group exchanges the sync header by all_to_all (every rank sends
# its header straight to every other, one round), or by torchtally.sync.exchange's ring where a
# host has fewer cores than ranks, rather than gloo's ring all_gather (W - 1 rounds, each waiting
# on the slowest link); see docs/architecture.md, "The header exchange".
DIRECT_HEADER_MAX_WORLD = 16


def _process_group(group: Optional[Any]) -> Optional[Any]:
    """``group``, or the default group for None; None when nothing is initialised. (One lookup
    of the default group: each runs two or three of c10d's Python functions, at every step.)"""
    if group is None:
        return torch.distributed.group.WORLD if torch.distributed.is_available() else None
    return group if initialized() else None


def _cached_info_of(pg: Any) -> Optional[GroupInfo]:
    """group_info of process group ``pg`` if it was looked up before, else None."""
    entry = _group_infos.get(id(pg))
    return entry[1] if entry is not None and entry[0] is pg else None


def _bound_device(pg: Any) -> Optional[torch.device]:
    """The CUDA device `pg` was bound to (torch >= 2.3: init_process_group(device_id=...)), or None."""
    bound = getattr(pg, "bound_device_id", None)
    return torch.device(bound) if bound is not None else None


def group_info(group: Optional[Any] = None) -> GroupInfo:
    """Size, rank, members and device of ``group`` (default: the world), cached per group
    object: the c10d queries behind it cost more than a small sync's own Python."""
    pg = group if group is not None else torch.distributed.group.WORLD
    cached = _cached_info_of(pg)
    if cached is not None:
        return cached
    backend = str(torch.distributed.get_backend(group)).lower()
    size = world_size(group)
    nccl_only = "nccl" in backend and "gloo" not in backend
    info = GroupInfo(
        size=size,
        rank=rank(group),
        ranks=tuple(group_ranks(group)),
        nccl_only=nccl_only,
        direct_header=not nccl_only and "gloo" in backend and size <= DIRECT_HEADER_MAX_WORLD,
        bound_device=_bound_device(pg) if nccl_only else None,
    )
    _group_infos[id(pg)] = (pg, info)  # holding pg keeps its id from being reused
    return info


def wait(work: Any, deadline: float, poll: bool = False) -> None:
    """Wait for an async collective until ``deadline`` (time.monotonic()); raise on timeout.

    ``poll`` (NCCL groups): look at ``work.is_completed()`` until it is done or the deadline
    passes, then ``work.wait()`` with no timeout. An NCCL work's ``wait(timeout)`` would instead
    abort the process group on a timeout, the user's own group included; a timeout here raises
    and leaves the group alone (NCCL's watchdog still has the last word on a collective that
    never finishes)."""
    if not poll:
        remaining = max(deadline - time.monotonic(), 1e-3)
        work.wait(timeout=datetime.timedelta(seconds=remaining))
        return
    pause = 20e-6
    while not work.is_completed():
        if time.monotonic() > deadline:
            raise TimeoutError("the collective did not complete before the sync's deadline")
        time.sleep(pause)
        pause = min(pause * 2, 1e-3)
    work.wait()


# Per-group sequence numbers of syncs. Every rank of a group makes the same syncs in the same
# order, so the numbers agree across ranks and name one sync in a roll call (torchtally.sync.rollcall).
_sync_counters: Dict[Tuple[int, ...], int] = {}


def next_sync_id(group: Optional[Any] = None, info: Optional[GroupInfo] = None) -> int:
    """The next sync number of ``group`` (``info``: its group_info, when the caller has it)."""
    key = (info or group_info(group)).ranks
    _sync_counters[key] = _sync_counters.get(key, 0) + 1
    return _sync_counters[key]


def default_store() -> Any:
    """The default process group's store. There is no public accessor; the private one has
    existed since torch 1.x. Raises when there is none."""
    return torch.distributed.distributed_c10d._get_default_store()
