"""Inputs that no torchtally metric can read, refused before its update runs: a meta tensor
(it holds no values) and, per class, dtypes it has no reading for (float8, uint16-uint64 and
complex unless the class says otherwise). Without this check such input reached torch ops deep
inside an update and escaped as NotImplementedError or RuntimeError, sometimes after the metric
had followed it to the meta device.

Only the classes torchtally's modules define refuse (and their subclasses); a user's own
metric may update on meta tensors (its states follow them). ``_guards_inputs`` is a class
attribute set at class creation, so the check costs one attribute read where it is off."""

from typing import Any, Callable, FrozenSet, Iterator, Optional, Tuple

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
    return TypeError(
        f"{name}: expected a floating or integer tensor (float16-float64, int8-int64, uint8 or bool: the dtypes "
        f"{type(metric).__name__} reads), got {t.dtype}"
    )


def _first_unreadable(values: Any, refused: FrozenSet[torch.dtype], on_meta: bool) -> Any:
    """(the value, the tensor at fault, where inside it) for the first of ``values`` that is or
    holds an unreadable tensor, or None. The common case (a few readable tensors) costs a type
    check, is_meta and a set lookup per tensor."""
    for value in values:
        if isinstance(value, torch.Tensor):
            if (value.is_meta and not on_meta) or value.dtype in refused:
                return value, value, ""
        elif isinstance(value, (list, dict)) and value:
            for where, t in _nested(value):
                if (t.is_meta and not on_meta) or t.dtype in refused:
                    return value, t, where
    return None


def check_readable(metric: Any, fn: Callable[..., Any], args: tuple, kwargs: dict) -> None:
    """Raise TypeError / ValueError naming the first argument ``metric`` cannot read (see above).
    A metric whose states are on meta (moved there with .to("meta")) takes meta tensors."""
    refused = metric.refused_input_dtypes
    found = _first_unreadable(args, refused, False) or (kwargs and _first_unreadable(kwargs.values(), refused, False))
    if not found:
        return
    if metric.device.type == "meta":  # (read only now: device.type costs more than the whole check)
        found = _first_unreadable(args, refused, True) or _first_unreadable(kwargs.values(), refused, True)
        if not found:
            return
    value, t, where = found
    raise _refusal(argument_name(metric.named_update(fn), args, kwargs, value) + where, t, metric)


# Families whose every class checks meta tensors and dtypes in its own functional layer and C
# kernels (tests/catalogue/test_atomic_updates.py holds them to it): their hot update path does
# not pay for this check twice.
_SELF_CHECKED = ("torchtally.classification.", "torchtally.regression.", "torchtally.segmentation.",
                 "torchtally.retrieval.")  # fmt: skip


def module_guard(cls: type) -> Optional[bool]:
    """``_guards_inputs`` for a class torchtally's package defines (Metric.__init_subclass__
    sets it): True but for the bases in torchtally.base and for ``_SELF_CHECKED``; None for a
    class written elsewhere (a user's: it inherits its base's, so a user's own Metric does not
    refuse, a subclass of a torchtally metric does)."""
    module = cls.__module__
    if not module.startswith("torchtally.") or module.startswith("torchtally.base."):
        return None
    return not module.startswith(_SELF_CHECKED)


def guards_inputs(cls: type) -> bool:
    return bool(getattr(cls, "_guards_inputs", False))


def refused_dtypes_of(metric: Any) -> FrozenSet[torch.dtype]:
    """The dtypes ``metric`` refuses: its class's ``refused_input_dtypes`` when torchtally wrote
    it (or a base of it), none for a user's own metric."""
    own = any(module_guard(klass) is not None for klass in type(metric).__mro__)
    return metric.refused_input_dtypes if own or guards_inputs(type(metric)) else frozenset()
