"""A metric's options (thresholds, ignore_index, top_k, average, ...), described exactly, so
that two differently configured metrics are never combined without a word.

Two metrics whose states have the same shape and dtype can still mean different things: bin
edges [.1, .5, .9] against [.2, .3, .4], threshold 0.5 against 0.7; and a compute-only option
(``average``) makes two ranks print different numbers from the same synced state. So every
option goes into the sync plan's fingerprint (a difference raises SyncError on every rank
before any data moves) and is compared by ``merge_state`` and ``load_state_dict`` (ValueError).

Which attributes are options:

* ``option_names`` (a class attribute, a tuple of attribute names) when the class sets it;
* otherwise, for a Metric, every public attribute (no leading underscore) of the instance that
  holds a plain value, except states and the sync and runtime settings (``NOT_OPTIONS``): a
  Metric declares its state, so what else it holds is configuration. Plain values: None, bool,
  numbers, str, torch.dtype, enums, tuples, lists and str-keyed dicts of them, and tensors;
* for a class made distributed by the decorators (torchtally.decorators), whose unsynced
  attributes may legitimately differ per rank (ignite's contract), only the attributes that
  hold a constructor argument: named like a parameter of an ``__init__`` of the class or its
  bases, with or without leading underscores (``self._average = average``, ignite's style),
  holding a plain value other than a tensor, and not synced.

Each option is described by a canonical string: numbers and tensor values by the shortest
decimal that reads back as the same value in their dtype (so equal strings mean bit-equal
values, and different values never look alike), a long tensor by a few values, its shape and
a digest of all its bytes. Describing happens once per metric (see Metric.described_options);
this module has no state of its own.
"""
import enum
import functools
import hashlib
import inspect
import math
import numbers
import struct
from typing import Any, Dict, Iterable, List, Mapping, Optional, Tuple

import torch

# Attributes that never change what a metric computes, or that the sync checks on its own.
NOT_OPTIONS = frozenset({
    "training", "sync_on_compute", "process_group", "sync_timeout", "recipient_rank", "device",
    "compute_on_cpu", "dist_sync_on_step", "dist_sync_fn", "distributed_available_fn", "compute_with_cache",
    "validate_args", "state_key", "option_names",
})
_SHOWN = 8  # values of a tensor shown in full; a longer one is shown in part, with a digest

Options = Dict[str, str]  # option name -> canonical description


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


def find_options(obj: Any, exclude: Iterable[str] = (), decorated: bool = False) -> Options:
    """{name: description} of ``obj``'s options (see the module docstring): the names its class
    lists in ``option_names``; otherwise its public attributes holding plain values, or for a
    ``decorated`` class its attributes holding constructor arguments; never those in ``exclude``."""
    attributes = getattr(obj, "__dict__", {})
    listed = getattr(type(obj), "option_names", None)
    skip = NOT_OPTIONS.union(exclude)
    options: Options = {}
    if listed is not None:
        for name in listed:
            value = getattr(obj, name, None)
            text = describe_value(value)
            options[name] = text if text is not None else f"<{type(value).__name__}>"
        return options
    parameters = _constructor_parameters(type(obj)) if decorated else frozenset()
    for name, value in attributes.items():
        if name in skip or (name.lstrip("_") not in parameters if decorated else name.startswith("_")):
            continue
        text = describe_value(value, tensors=not decorated)
        if text is not None:
            options[name] = text
    return options


# ignite.metrics.Metric's own constructor arguments: how and where it runs, not what it computes.
_RUNTIME_PARAMETERS = frozenset({"self", "output_transform", "device", "skip_unrolling"})


@functools.lru_cache(maxsize=256)
def _constructor_parameters(cls: type) -> frozenset:
    names = set()
    for klass in cls.__mro__:
        init = klass.__dict__.get("__init__")
        if init is None or klass is object:
            continue
        try:
            parameters = inspect.signature(init).parameters.values()
        except (TypeError, ValueError):  # a builtin without a signature
            continue
        names.update(p.name for p in parameters if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD))
    return frozenset(names - _RUNTIME_PARAMETERS - NOT_OPTIONS)


def differences(mine: Mapping[str, str], theirs: Mapping[str, str],
                common_only: bool = False) -> List[Tuple[str, str, str]]:
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


def raise_if_different(metric: str, mine: Mapping[str, str], theirs: Mapping[str, str], where: str,
                       other: str, common_only: bool = False) -> None:
    """ValueError naming ``metric``, every option that differs, and both values."""
    diffs = differences(mine, theirs, common_only)
    if diffs:
        listed = "; ".join(f"option '{n}' is {a} here, {b} in {other}" for n, a, b in diffs)
        raise ValueError(
            f"{where}: {metric} is configured differently from {other}: {listed}. States counted under "
            "other options would give a wrong result; configure both alike"
        )


def describe_plan_differences(reference: List[Tuple[str, Options]], other: List[Tuple[str, Options]],
                              rank: int) -> List[str]:
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
        notes[-1] += (" (a metric's options are its public attributes holding plain values, or those its "
                      "class lists in option_names; configure every rank alike)")
    return notes


def option_lines(options: List[Tuple[str, Options]]) -> List[str]:
    """The options as lines of a sync plan's description (what its fingerprint hashes)."""
    return [f"option {label}.{name} = {text}" for label, opts in options for name, text in opts.items()]


class Configured:
    """Mixin of Metric: its options, described once and kept current when one is assigned."""

    @property
    def described_options(self) -> Options:
        """{option: canonical description} of this metric (see torchtally.metric_config): what
        the sync fingerprint, ``merge_state`` and ``load_state_dict`` compare. Which attributes
        are options is settled the first time this is read, at the latest just before the first
        update (an attribute an update adds later is not one); assigning an option afterwards
        updates its description, and drops the sync plan and the cached result."""
        d = self.__dict__
        options = d.get("_options")
        if options is None:
            options = d["_options"] = find_options(self, exclude=d["_specs"])
        return options

    def _option_assigned(self, name: str) -> None:
        d = self.__dict__
        options = d.get("_options")
        if options is None or name not in options:
            return
        value = getattr(self, name, None)
        text = describe_value(value)
        text = f"<{type(value).__name__}>" if text is None else text
        if text != options[name]:
            d["_options"] = {**options, name: text}  # a new dict: plans built before keep theirs
            d["_plan"], d["_cache"] = None, None
            d["_spec_version"] += 1

    def check_options_of(self, other: "Configured", where: str) -> None:
        """ValueError unless ``other`` (a metric merged into this one) has the same options."""
        raise_if_different(type(self).__name__, self.described_options, other.described_options, where,
                           f"the {type(other).__name__} merged in")
