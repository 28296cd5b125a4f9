"""Checkpoints that resume at another world size: the on-disk form that Metric,
MetricCollection, MetricHook and UnpaddedDistributedSampler give torch.distributed.checkpoint.

A metric's state on one rank is only a share of the epoch's total, so a checkpoint taken on W
ranks and loaded on W' ranks must carry every rank's share. Each object's DCP form is one entry,
``{RESUME_KEY: <bytes>}``, whose bytes hold a record with every saved rank's local state in rank
order (gathered at save: every rank calls ``dcp.save``, so every rank takes part). All ranks
write the same bytes under the same key, so DCP keeps a single copy on disk, and any number of
ranks can read all of it back without knowing how many saved it (DCP gets the bytes in a
``PackedRecord``; ``resumable_state_dict()`` gives them as they are, for other checkpointers).
On load the ranks' states are combined by each state's own reduce (the same ``combine_states``
that ``merge_state`` and the sync use): rank 0 takes the total, the other ranks start empty, so
the total is counted once.

The bytes are a ``torch.save`` of plain containers, numbers, strings and tensors, read back
with ``weights_only=True``: the record holds data, never code.

Why bytes and not tensors: DCP loads tensors in place into tensors the loading object already
holds, of the saved shape; a fresh object knows neither how many ranks saved nor how many rows
their cat states held. A non-tensor entry is read whole, whatever its size.
"""

import io
import sys
from importlib import metadata
from types import FrameType
from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple

import torch
import torch.distributed as td

__all__ = [
    "RESUME_KEY",
    "PackedRecord",
    "checkpoint_call",
    "checkpointer_state_dict",
    "for_checkpoint",
    "gather_from_ranks",
    "is_resumable",
    "pack_record",
    "process_rank",
    "raise_if_record_differs",
    "template",
    "unpack_record",
]

RESUME_KEY = "torchtally_resume"  # the one entry of a resumable state dict
FORMAT = 1  # the record layout; a reader refuses other formats
_LOOKED_AT = 10  # caller frames searched for torch.distributed.checkpoint's save or load


def _package_version() -> str:
    try:
        return metadata.version("torchtally")
    except metadata.PackageNotFoundError:  # a source tree used without installing
        return "unknown"


VERSION = _package_version()


def checkpoint_call() -> Optional[str]:
    """``"save"`` when the caller's ``state_dict()`` call comes from ``dcp.save`` (or
    ``dcp.async_save``), ``"load"`` when from ``dcp.load``, else None.

    Metric and MetricCollection are nn.Modules: a plain ``state_dict()`` must stay nn.Module's
    (torchmetrics' keys, no collective), while DCP, which calls the same method, needs the
    resumable form; DCP gives no other sign of itself than being the caller."""
    frame: Optional[FrameType] = sys._getframe(2)  # the caller of the state_dict() that asks
    for _ in range(_LOOKED_AT):
        if frame is None:
            break
        module = frame.f_globals.get("__name__", "")
        if module == "torch.distributed.checkpoint.state_dict_saver":
            return "save"
        if module == "torch.distributed.checkpoint.state_dict_loader":
            return "load"
        frame = frame.f_back
    return None


def process_rank() -> Tuple[int, int]:
    """(rank, world size) in the default process group; (0, 1) without one."""
    if td.is_available() and td.is_initialized():
        return td.get_rank(), td.get_world_size()
    return 0, 1


def gather_from_ranks(value: Any) -> List[Any]:
    """Every rank's ``value`` (picklable, tensors on the CPU) in rank order: a collective that
    every rank of the default process group must reach; ``[value]`` without one."""
    _, world = process_rank()
    if world == 1:
        return [value]
    out: List[Any] = [None] * world
    td.all_gather_object(out, value)
    return out


def pack_record(kind: str, record: Dict[str, Any]) -> Dict[str, bytes]:
    """The resumable state dict ``{RESUME_KEY: bytes}`` of ``record`` (plain data) for a ``kind``."""
    buffer = io.BytesIO()
    torch.save({"format": FORMAT, "kind": kind, "torchtally_version": VERSION, **record}, buffer)
    return {RESUME_KEY: buffer.getvalue()}


class PackedRecord:
    """A record's bytes as DCP stores them: in a uint8 tensor, which ``torch.save`` writes raw.
    (DCP pickles a non-tensor entry with protocol 2, which would write plain ``bytes`` as a
    latin-1 string: about 1.4 times their size for binary data.)"""

    def __init__(self, data: torch.Tensor) -> None:
        self.data = data


def for_checkpoint(state_dict: Dict[str, bytes]) -> Dict[str, Any]:
    """``pack_record``'s state dict as ``dcp.save`` should get it (see PackedRecord)."""
    blob = state_dict[RESUME_KEY]
    return {RESUME_KEY: PackedRecord(torch.frombuffer(bytearray(blob), dtype=torch.uint8))}


def template() -> Dict[str, bytes]:
    """What ``state_dict()`` gives ``dcp.load``: the key to read (DCP replaces the value)."""
    return {RESUME_KEY: b""}


class DcpStateDict:
    """``state_dict`` as nn.Module's, except when torch.distributed.checkpoint calls it:
    ``dcp.save`` gets the class's ``resumable_state_dict()`` (every rank's state, for a resume at
    any world size), ``dcp.load`` the key to read. Listed before nn.Module in a class's bases."""

    def state_dict(self, *args: Any, destination: Any = None, prefix: str = "", keep_vars: bool = False) -> Any:
        if not args and destination is None and not prefix:
            call = checkpoint_call()
            if call == "save":
                return for_checkpoint(self.resumable_state_dict())  # type: ignore[attr-defined]
            if call == "load":
                return template()
        return super().state_dict(*args, destination=destination, prefix=prefix, keep_vars=keep_vars)  # type: ignore[misc]


def checkpointer_state_dict(resumable: Callable[[], Dict[str, bytes]]) -> Dict[str, Any]:
    """``state_dict()`` of an object that is saved only in the resumable form (a hook, a
    sampler): for ``dcp.save`` the record as DCP stores it, for ``dcp.load`` the key to read,
    for any other caller (Accelerate's ``save_state``, Fabric's ``save``, a plain
    ``torch.save``) the record's plain bytes, which ``torch.load(weights_only=True)`` reads."""
    call = checkpoint_call()
    if call == "load":
        return template()
    if call == "save":
        return for_checkpoint(resumable())
    return resumable()


def is_resumable(state_dict: Mapping[str, Any]) -> bool:
    """Whether ``state_dict`` is a resumable state dict (``pack_record``'s form)."""
    return isinstance(state_dict, Mapping) and RESUME_KEY in state_dict


def unpack_record(state_dict: Mapping[str, Any], kind: str) -> Dict[str, Any]:
    """The record of a resumable state dict, checked to be a ``kind``'s of this format and
    torchtally version (ValueError naming what differs)."""
    blob = state_dict.get(RESUME_KEY) if isinstance(state_dict, Mapping) else None
    if isinstance(blob, PackedRecord) and isinstance(blob.data, torch.Tensor):
        blob = blob.data.numpy().tobytes()
    if not isinstance(blob, (bytes, bytearray)) or not blob:
        raise ValueError(
            f"{kind}.load_state_dict: expected a resumable state dict {{'{RESUME_KEY}': bytes}} "
            f"(what state_dict() gives torch.distributed.checkpoint), got {type(blob).__name__}"
        )
    try:
        record = torch.load(io.BytesIO(bytes(blob)), map_location="cpu", weights_only=True)
    except Exception as exc:  # torch.load raises many kinds for bytes that are not its format
        raise ValueError(f"{kind}.load_state_dict: not a torchtally checkpoint ({type(exc).__name__}: {exc})") from None
    if not isinstance(record, dict) or record.get("format") != FORMAT:
        found = record.get("format") if isinstance(record, dict) else type(record).__name__
        raise ValueError(f"{kind}.load_state_dict: checkpoint format {found!r}, this torchtally reads {FORMAT}")
    raise_if_record_differs(
        kind,
        {"kind": kind, "torchtally version": VERSION},
        {"kind": record["kind"], "torchtally version": record["torchtally_version"]},
    )
    return record


def raise_if_record_differs(owner: str, mine: Mapping[str, Any], saved: Mapping[str, Any]) -> None:
    """ValueError naming every entry of ``mine`` that the checkpoint (``saved``) has otherwise:
    a checkpoint of another configuration is never merged."""
    diffs = [
        f"{name} is {mine[name]!r} here, {saved.get(name)!r} in the checkpoint"
        for name in mine
        if mine[name] != saved.get(name)
    ]
    if diffs:
        raise ValueError(
            f"{owner}.load_state_dict: the checkpoint was saved by a different configuration: "
            + "; ".join(diffs)
            + ". Nothing was loaded; build the object as the saving job did"
        )
