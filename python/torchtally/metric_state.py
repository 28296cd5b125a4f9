"""Small pieces Metric and MetricCollection share: combining state values, where an update's
inputs are, and which keyword arguments an update takes."""
import inspect
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Tuple

import torch


@dataclass
class HeldStates:
    """A metric's state objects and flags at one moment (references, no copies)."""

    values: Dict[str, Any]  # fixed/merge state -> tensor; cat state -> its list of row blocks
    updated: bool
    update_count: int
    cache: Any


def combine(reduce: str, values: List[torch.Tensor]) -> torch.Tensor:
    """Combine same-shaped fixed states (or cat states) the way a sync would."""
    if reduce == "cat":
        return torch.cat(values)
    out = values[0]
    for v in values[1:]:
        if reduce == "sum":
            out = out + v
        elif reduce == "max":
            out = torch.maximum(out, v)
        elif reduce == "min":
            out = torch.minimum(out, v)
        elif reduce == "prod":
            out = out * v
        else:
            raise ValueError(f"combine: unknown reduce {reduce!r}")
    return out.clone() if len(values) == 1 else out


def canonical_device(device: Any) -> torch.device:
    """``device`` as tensors on it report theirs ("cuda" -> "cuda:<current>"), so that the
    update's device check compares like with like."""
    device = torch.device(device)
    if device.index is None and device.type not in ("cpu", "meta"):
        try:
            return torch.empty(0, device=device).device
        except (RuntimeError, AssertionError):  # no such device here: the first use will say so
            return device
    return device


def first_tensor(args: tuple, kwargs: dict) -> Optional[torch.Tensor]:
    """The first tensor among an update's arguments (positional, then keyword), or None."""
    for value in args:
        if isinstance(value, torch.Tensor):
            return value
    for value in kwargs.values():
        if isinstance(value, torch.Tensor):
            return value
    return None


def argument_name(fn: Any, args: tuple, kwargs: dict, x: torch.Tensor) -> str:
    """The parameter name ``x`` was passed as (error messages only)."""
    for key, value in kwargs.items():
        if value is x:
            return key
    try:
        params = list(inspect.signature(fn).parameters.values())[1:]  # without self
    except (TypeError, ValueError):
        params = []
    for i, value in enumerate(args):
        if value is x:
            if i < len(params) and params[i].kind in (params[i].POSITIONAL_ONLY, params[i].POSITIONAL_OR_KEYWORD):
                return params[i].name
            return f"argument {i}"
    return "input"


def _all_kwargs(kwargs: Dict[str, Any]) -> Dict[str, Any]:
    return kwargs


def kwargs_filter(update: Callable[..., Any]) -> Callable[[Dict[str, Any]], Dict[str, Any]]:
    """A function keeping the keyword arguments ``update`` accepts by name (all of them when it
    takes ``**kwargs``): a collection passes each metric only the keywords it understands."""
    try:
        params = inspect.signature(update).parameters.values()
    except (TypeError, ValueError):
        return _all_kwargs
    if any(p.kind == p.VAR_KEYWORD for p in params):
        return _all_kwargs
    names = frozenset(p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY))

    def accepted(kwargs: Dict[str, Any]) -> Dict[str, Any]:
        return {k: v for k, v in kwargs.items() if k in names}

    return accepted


def raise_key_problems(owner: str, missing: List[str], unexpected: List[str]) -> None:
    """Raise nn.Module's strict-load error for these keys, if any (before anything is loaded)."""
    parts = [f"{what} key(s) in state_dict: " + ", ".join(f'"{k}"' for k in keys)
             for what, keys in (("Missing", missing), ("Unexpected", unexpected)) if keys]
    if parts:
        raise RuntimeError(f"Error(s) in loading state_dict for {owner}:\n\t" + "\n\t".join(parts))


def applied_device_and_dtype(fn: Callable[[torch.Tensor], torch.Tensor],
                             dtype: torch.dtype) -> Tuple[Optional[torch.device], torch.dtype]:
    """Where nn.Module's ``_apply(fn)`` sends tensors (None: it does not move them) and which
    dtype it gives a float tensor of ``dtype``, found by applying ``fn`` to small probes rather
    than to the metric's state (which may live on a device this process cannot allocate on).

    A probe on the CPU shows a move to another device. When it stays on the CPU, ``fn`` either
    moves to the CPU or does not move at all; a probe on "meta" tells the two apart (a move to
    the CPU cannot copy out of a meta tensor, or leaves meta)."""
    on_cpu = fn(torch.zeros((), dtype=dtype))
    if on_cpu.device.type != "cpu":
        return on_cpu.device, on_cpu.dtype
    try:
        stays = fn(torch.zeros((), dtype=dtype, device="meta")).device.type == "meta"
    except (NotImplementedError, RuntimeError):
        stays = False
    return (None if stays else torch.device("cpu")), on_cpu.dtype
