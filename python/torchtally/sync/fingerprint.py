"""Options (thresholds, ignore_index, top_k, average, ...) described exactly, compared, and
folded into a sync plan's fingerprint, so that two differently configured metrics are never
combined without a word. Which attributes of a metric are options: torchtally.base.options.

Two metrics whose states have the same shape and dtype can still mean different things: bin
edges [.1, .5, .9] against [.2, .3, .4], threshold 0.5 against 0.7; and a compute-only option
(``average``) makes two ranks print different numbers from the same synced state. So every
option goes into the sync plan's fingerprint (a difference raises SyncError on every rank
before any data moves) and is compared by ``merge_state`` and ``load_state_dict`` (ValueError).

Each option is described by a canonical string: numbers and tensor values by the shortest
decimal that reads back as the same value in their dtype (so equal strings mean bit-equal
values, and different values never look alike), a long tensor by a few values, its shape and
a digest of all its bytes. Describing happens once per metric (see Metric.described_options);
this module has no state of its own.
"""

import enum
import hashlib
import math
import numbers
import struct
from typing import Any, Dict, List, Mapping, Optional, Tuple

import torch

_SHOWN = 8  # values of a tensor shown in full; a longer one is shown in part, with a digest

OptionTexts = Dict[str, str]  # option name -> canonical description


def describe_value(value: Any, tensors: bool = True) -> Optional[str]:
    """The canonical description of an option value, or None when ``value`` is not a plain
    value (a callable, a module, any other object): such an attribute is not an option."""
    if value is None or isinstance(value, (bool, str)):
        return repr(value)
    if isinstance(value, enum.Enum):
        return f"{type(value).__name__}.{value.name}"
    if isinstance(value, numbers.Integral):
        return repr(int(value))
    if isinstance(value, numbers.Real):
        return repr(float(value))  # the shortest repr that reads back as the same double: exact
    if isinstance(value, torch.dtype):
        return str(value)
    if isinstance(value, (tuple, list)):
        parts = [describe_value(v, tensors) for v in value]
        return None if None in parts else "[" + ", ".join(parts) + "]"  # type: ignore[arg-type]
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        parts = [describe_value(value[k], tensors) for k in sorted(value)]
        if None in parts:
            return None
        return "{" + ", ".join(f"{k!r}: {p}" for k, p in zip(sorted(value), parts)) + "}"
    if tensors and isinstance(value, torch.Tensor):
        return _describe_tensor(value)
    return None


def _describe_tensor(t: torch.Tensor) -> str:
    dtype = str(t.dtype).replace("torch.", "")
    shape = "" if t.dim() == 1 else f", shape {tuple(t.shape)}"
    if t.is_meta:
        return f"tensor(meta, {dtype}, shape {tuple(t.shape)})"
    flat = t.detach().reshape(-1).cpu()
    n = flat.numel()
    if n <= _SHOWN:
        body = ", ".join(_scalar(v, t.dtype) for v in flat.tolist())
    else:
        head = [_scalar(v, t.dtype) for v in flat[:3].tolist()]
        tail = [_scalar(v, t.dtype) for v in flat[-2:].tolist()]
        raw = flat.contiguous().view(torch.uint8).numpy().tobytes()
        digest = hashlib.blake2b(raw, digest_size=8).hexdigest()
        body = f"{n} values: " + ", ".join(head) + ", ..., " + ", ".join(tail) + f"; digest {digest}"
    return f"tensor([{body}], {dtype}{shape})"


def _scalar(v: Any, dtype: torch.dtype) -> str:
    """One tensor value: the shortest decimal that reads back as ``v`` in ``dtype``."""
    if not isinstance(v, float) or not math.isfinite(v) or dtype == torch.float64:
        return repr(v)
    for digits in range(1, 18):
        text = f"{v:.{digits}g}"
        if _round_to(float(text), dtype) == v:
            return text
    return repr(v)


def _round_to(x: float, dtype: torch.dtype) -> Optional[float]:
    try:
        if dtype == torch.float32:
            return struct.unpack("f", struct.pack("f", x))[0]
        if dtype == torch.float16:
            return struct.unpack("e", struct.pack("e", x))[0]
    except OverflowError:
        return None
    return torch.tensor(x, dtype=dtype).item()  # bfloat16, float8: rare, and described once


def differences(
    mine: Mapping[str, str], theirs: Mapping[str, str], common_only: bool = False
) -> List[Tuple[str, str, str]]:
    """(option, my description, theirs) for every option that differs; an option only one side
    has counts as "<not set>" there, unless ``common_only``."""
    names = list(mine) + [n for n in theirs if n not in mine]
    missing = "<not set>"
    out = []
    for name in names:
        if common_only and (name not in mine or name not in theirs):
            continue
        a, b = mine.get(name, missing), theirs.get(name, missing)
        if a != b:
            out.append((name, a, b))
    return out


def raise_if_different(
    metric: str, mine: Mapping[str, str], theirs: Mapping[str, str], where: str, other: str, common_only: bool = False
) -> None:
    """ValueError naming ``metric``, every option that differs, and both values."""
    diffs = differences(mine, theirs, common_only)
    if diffs:
        listed = "; ".join(f"option '{n}' is {a} here, {b} in {other}" for n, a, b in diffs)
        raise ValueError(
            f"{where}: {metric} is configured differently from {other}: {listed}. States counted under "
            "other options would give a wrong result; configure both alike"
        )


def describe_plan_differences(
    reference: List[Tuple[str, OptionTexts]], other: List[Tuple[str, OptionTexts]], rank: int
) -> List[str]:
    """For a sync's error: each option that differs between rank 0's plan and ``rank``'s,
    named by its metric, with both values."""
    notes = []
    theirs = dict(other)
    for label, mine in reference:
        if label not in theirs:
            continue
        for name, a, b in differences(mine, theirs[label]):
            notes.append(f"{label} option '{name}': rank 0 has {a}, rank {rank} has {b}")
    if notes:
        notes[-1] += (
            " (a metric's options are its public attributes holding plain values, or those its "
            "class lists in option_names; configure every rank alike)"
        )
    return notes


def option_lines(options: List[Tuple[str, OptionTexts]]) -> List[str]:
    """The options as lines of a sync plan's description (what its fingerprint hashes)."""
    return [f"option {label}.{name} = {text}" for label, opts in options for name, text in opts.items()]
