"""Who carries a sync's data collectives over a process group: torch.distributed (the default)
or a transport registered for that group, such as torchtally.sync.nccl's communicator.

A transport has ``.device`` (where the packed buffers must live) and two collectives with
torch.distributed's calling convention, each returning a work whose
``wait(timeout=timedelta)`` returns once the collective is done and raises when it failed or
timed out:

    all_reduce(buf, op=ReduceOp, group=..., async_op=True)
    all_gather_flat(out, inp, group=..., async_op=True)   # out = the ranks' inp, in rank order

With a recipient rank, a transport still reduces / gathers everywhere; the others drop the
result. The sync header, its checks and its error reports always stay on torch.distributed
(see torchtally.sync.protocol).
"""

from typing import Any, Dict, Optional, Tuple

import torch.distributed

_TRANSPORTS: Dict[int, Tuple[Any, Any]] = {}


def _group_key(group: Optional[Any]) -> Any:
    return group if group is not None else torch.distributed.group.WORLD


def register_transport(group: Optional[Any], transport: Any) -> None:
    """Make ``transport`` carry the data collectives of every later sync over ``group``."""
    pg = _group_key(group)
    _TRANSPORTS[id(pg)] = (pg, transport)  # holding pg keeps its id from being reused


def unregister_transport(group: Optional[Any]) -> Optional[Any]:
    """Give ``group``'s data collectives back to torch.distributed; returns the transport, if any."""
    entry = _TRANSPORTS.pop(id(_group_key(group)), None)
    return None if entry is None else entry[1]


def transport_for(group: Optional[Any]) -> Optional[Any]:
    """The transport registered for ``group``, or None (torch.distributed carries everything)."""
    if not _TRANSPORTS:
        return None
    entry = _TRANSPORTS.get(id(_group_key(group)))
    return entry[1] if entry is not None and entry[0] is _group_key(group) else None
