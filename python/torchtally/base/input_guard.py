"""Inputs that no torchtally metric can read, refused before its update runs: a meta tensor
(it holds no values) and, per class, dtypes it has no reading for (float8, uint16-uint64 and
complex unless the class says otherwise). Without this check such input reached torch ops deep
inside an update and escaped as NotImplementedError or RuntimeError, sometimes after the metric
had followed it to the meta device.

Only the classes torchtally's modules define refuse (and their subclasses); a user's own
metric may update on meta tensors (its states follow them)."""

import sys
from typing import Any, Callable, FrozenSet, Iterator, Tuple

import torch

from .placement import argument_name

UNREADABLE_DTYPES: FrozenSet[torch.dtype] = frozenset(
    {
        torch.float8_e4m3fn,
        torch.float8_e5m2,
        torch.float8_e4m3fnuz,
        torch.float8_e5m2fnuz,
        torch.uint16,
        torch.uint32,
        torch.uint64,
        torch.complex32,
        torch.complex64,
        torch.complex128,
    }
)


def _nested(value: Any) -> Iterator[Tuple[str, torch.Tensor]]:
    """(where, tensor) inside a list or dict argument, one level down (and in the dicts of a list)."""
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, item in items:
        if isinstance(item, torch.Tensor):
            yield f"[{key!r}]", item
        elif isinstance(item, dict):
            for inner, t in item.items():
                if isinstance(t, torch.Tensor):
                    yield f"[{key!r}][{inner!r}]", t


def _refusal(name: str, t: torch.Tensor, metric: Any) -> Any:
    if t.is_meta:
        return ValueError(
            f"{name}: expected a tensor on {metric.device}, got one on meta (a tensor holding no values: "
            f"{str(t.dtype).replace('torch.', '')} {list(t.shape)})"
        )
    return TypeError(f"{name}: unsupported dtype {t.dtype}; expected bool, an integer dtype up to int64 or float")


def _unreadable(t: torch.Tensor, refused: FrozenSet[torch.dtype], meta_ok: bool) -> bool:
    return (t.is_meta and not meta_ok) or t.dtype in refused


def check_readable(metric: Any, fn: Callable[..., Any], args: tuple, kwargs: dict) -> None:
    """Raise TypeError / ValueError naming the first argument ``metric`` cannot read (see above).
    A metric whose states are on meta (moved there with .to("meta")) takes meta tensors."""
    refused = metric.refused_input_dtypes
    meta_ok = metric.device.type == "meta"
    for value in (*args, *kwargs.values()):
        if isinstance(value, torch.Tensor):
            if _unreadable(value, refused, meta_ok):
                raise _refusal(argument_name(metric.named_update(fn), args, kwargs, value), value, metric)
        elif isinstance(value, (list, dict)) and value:
            for where, t in _nested(value):
                if _unreadable(t, refused, meta_ok):
                    outer = argument_name(metric.named_update(fn), args, kwargs, value)
                    raise _refusal(outer + where, t, metric)


def guards_inputs(cls: type) -> bool:
    """Whether ``cls`` checks its inputs here: the nearest class of its MRO that says so with
    its own ``_guards_inputs``, or that a torchtally module defines, decides (found once per
    class). A class written in a docstring example is no module's: it does not refuse."""
    flag = cls.__dict__.get("_guards_inputs_found")
    if flag is None:
        flag = False
        for klass in cls.__mro__:
            own = vars(klass)  # the class's own attributes, not inherited ones
            if "_guards_inputs" in own:
                flag = bool(own["_guards_inputs"])
                break
            module = klass.__module__
            if module.startswith("torchtally.") and getattr(sys.modules.get(module), klass.__name__, None) is klass:
                flag = True
                break
        cls._guards_inputs_found = flag  # type: ignore[attr-defined]  # a cache on the class
    return flag
