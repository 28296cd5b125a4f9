"""Aggregation: value and weight inputs, the NaN policy, and the per-batch totals.

Values may be Python numbers, real tensors of any shape (bool, integer, floating, float8
included; read as float64), or anything ``torch.as_tensor`` reads (lists, numpy arrays);
complex tensors are a TypeError, meta tensors (which hold no values) a ValueError. A weight is
None (1 per value), a number, or a tensor broadcastable to the value's shape; weights must be
finite and >= 0 (a ValueError otherwise: with such weights the "mean" need not lie between
the values; torchmetrics accepts them).

NaN policy (``nan_strategy``, torchmetrics' semantics and default), for values and weights:

  "warn" (default)   positions where the value or its weight is NaN are dropped, with a warning;
  "ignore"           dropped silently;
  "error"            a NaN raises NaNValueError (a ValueError and a RuntimeError, as torchmetrics
                     raises RuntimeError) naming the argument and the first NaN's position;
  "disable"          no check: a NaN reaches the state and the result (it is then NaN);
  a float            at positions where the value or its weight is NaN, the value becomes that
                     number and the weight 1.

One deliberate difference: with "disable", torchmetrics' MeanMetric drops the weights (every
value weighs 1); here they are used as with every other strategy.

Inside a CUDA metric update in deferred mode (kernels.deferred_checks) nothing is read on the
host: a caller that gives ``fill`` (the value a dropped position takes, neutral for its
reduction) gets the values in their shape, dropped positions set to ``fill`` with weight 0;
"error" and bad weights become a verdict on the device (the batch is undone and its error
raised later, by the next update into the metric or by compute); "warn" counts the dropped
NaNs on the device and warns at the next update (if the count has reached the host by then)
or at compute, naming the update. A float strategy needs no verdict at all.
"""

import functools
import warnings
from typing import Optional, Tuple, Union

import torch
from torch import Tensor

from ...kernels import deferred_checks
from ...kernels.ops import compiling
from ...kernels.reference.checks import describe

NanStrategy = Union[str, float]
NAN_STRATEGIES = ("error", "warn", "ignore", "disable")
_F64 = torch.float64


class NaNValueError(ValueError, RuntimeError):
    """A NaN with nan_strategy="error": a ValueError (torchtally's rule for bad input) and a
    RuntimeError (what torchmetrics raises there)."""


def check_nan_strategy(nan_strategy: object) -> NanStrategy:
    """One of NAN_STRATEGIES or a float (a Python int is refused, as torchmetrics does)."""
    if isinstance(nan_strategy, float) or (isinstance(nan_strategy, str) and nan_strategy in NAN_STRATEGIES):
        return nan_strategy
    raise ValueError(
        f"nan_strategy: expected one of {NAN_STRATEGIES} or a float, got {nan_strategy!r} "
        "(Arg `nan_strategy` should either be a float or one of those strings)"
    )


def as_values(name: str, value: object, device: Optional[torch.device] = None) -> Tensor:
    """A Python number, real tensor or array-like as a float64 tensor (shape kept), on ``device``."""
    if isinstance(value, Tensor):
        if value.is_complex():
            raise TypeError(f"{name}: expected a real tensor, got {describe(value)}")
        if value.is_meta:
            raise ValueError(f"{name}: expected a tensor holding values, got a meta tensor {describe(value)}")
        if device is not None and value.device != device:
            raise ValueError(f"{name}: expected a tensor on {device} (the metric's device), got {value.device}")
        return value.detach().to(_F64)
    if isinstance(value, (bool, int, float)):
        return torch.tensor(float(value), dtype=_F64, device=device)
    try:
        t = torch.as_tensor(value, device=device)
    except (TypeError, ValueError, RuntimeError):
        raise TypeError(f"{name}: expected a tensor or a Python number, got {type(value).__name__}") from None
    if t.is_complex():
        raise TypeError(f"{name}: expected real values, got {describe(t)}")
    return t.to(_F64)


def as_weights(weight: object, value: Tensor, device: Optional[torch.device] = None) -> Optional[Tensor]:
    """None, or float64 weights broadcast to ``value``'s shape."""
    if weight is None:
        return None
    w = as_values("weight", weight, device if device is not None else value.device)
    try:
        return torch.broadcast_to(w, value.shape)
    except RuntimeError:
        raise ValueError(
            f"weight: expected a number or a tensor broadcastable to value's shape {list(value.shape)}, "
            f"got shape {list(w.shape)}"
        ) from None


def apply_nan_strategy(
    strategy: NanStrategy, name: str, value: Tensor, weight: Optional[Tensor] = None, fill: Optional[float] = None
) -> Tuple[Tensor, Optional[Tensor]]:
    """Apply the NaN policy to value (and its weight, of value's shape), then check the weights'
    range. Shapes are kept, except that dropping NaNs flattens (as torchmetrics). ``fill``: see
    the module docstring (None: drop on the host, as a "cat" state needs)."""
    if fill is not None and deferred_checks.deferring(value):
        return _on_device(strategy, name, value, weight, fill)
    if strategy != "disable":
        nan = torch.isnan(value)
        if weight is not None:
            nan = nan | torch.isnan(weight)
        if bool(nan.any()):
            value, weight = _handle_nans(strategy, name, value, weight, nan)
    if weight is not None and weight.numel():
        bad = ~(torch.isfinite(weight) & (weight >= 0))
        if strategy == "disable":
            bad = bad & ~torch.isnan(weight)
        if bool(bad.any()):
            i = int(bad.reshape(-1).nonzero()[0, 0])
            raise ValueError(
                f"weight: expected finite weights >= 0, got {float(weight.reshape(-1)[i])} at flat index {i}"
            )
    return value, weight


def _handle_nans(strategy, name, value, weight, nan):
    if strategy == "error":
        i = int(nan.reshape(-1).nonzero()[0, 0])
        which = name if bool(torch.isnan(value.reshape(-1)[i])) else "weight"
        raise NaNValueError(
            f"{which}: NaN at flat index {i} (nan_strategy='error': Encountered `nan` values in tensor; "
            "use 'warn' or 'ignore' to drop them)"
        )
    if isinstance(strategy, float):
        value = torch.where(nan, torch.full_like(value, strategy), value)
        return value, None if weight is None else torch.where(nan, torch.ones_like(weight), weight)
    if strategy == "warn":
        warnings.warn(_dropped_words(name, int(nan.sum())), UserWarning, stacklevel=5)
    keep = ~nan
    return value[keep], None if weight is None else weight[keep]


def _on_device(
    strategy: NanStrategy, name: str, value: Tensor, weight: Optional[Tensor], fill: float
) -> Tuple[Tensor, Optional[Tensor]]:
    """apply_nan_strategy without a host read (deferred checks; module docstring)."""
    search = functools.partial(apply_nan_strategy, strategy, name, value, weight)  # the host path raises
    given = weight is not None  # (weights made here for dropped values need no check)
    verdicts = []
    if strategy != "disable":
        nan = torch.isnan(value) if weight is None else torch.isnan(value) | torch.isnan(weight)
        if strategy == "error":
            verdicts.append(~nan.any())
        elif isinstance(strategy, float):
            value = torch.where(nan, strategy, value)
            weight = None if weight is None else torch.where(nan, 1.0, weight)
        else:
            if strategy == "warn":
                deferred_checks.hold_warning(nan.sum(), functools.partial(_dropped_words, name))
            value = torch.where(nan, fill, value)
            weight = torch.where(nan, 0.0, torch.ones_like(value) if weight is None else weight)
    if given and weight is not None and weight.numel():
        bad = ~(torch.isfinite(weight) & (weight >= 0))
        if strategy == "disable":
            bad = bad & ~torch.isnan(weight)
        verdicts.append(~bad.any())
    if verdicts:
        deferred_checks.hold(deferred_checks.all_true(verdicts, value.device), search, name)
    return value, weight


def _dropped_words(name: str, count: int) -> str:
    return f"{name}: Encountered `nan` values in tensor: {count} NaN value(s) dropped (nan_strategy='warn')"


def checked_values(
    strategy: NanStrategy,
    name: str,
    value: object,
    weight: object = None,
    device: Optional[torch.device] = None,
    fill: Optional[float] = None,
) -> Tuple[Tensor, Optional[Tensor]]:
    """Values (and weights) as float64 tensors of the value's shape, NaN policy applied
    (``fill``: see the module docstring)."""
    v = as_values(name, value, device)
    return apply_nan_strategy(strategy, name, v, as_weights(weight, v, device), fill)


_FLOATS = (torch.float16, torch.bfloat16, torch.float32, torch.float64)


def _host_floats(value: object, device: Optional[torch.device]) -> Optional[Tensor]:
    """``value`` (detached) when it is a non-empty floating CPU tensor on ``device`` that the
    fast paths below read as it is; None where ``checked_values`` must run (it also raises)."""
    if not isinstance(value, Tensor) or value.dtype not in _FLOATS or not value.is_cpu or compiling():
        return None
    if (device is not None and value.device != device) or value.numel() == 0:
        return None
    if value.device.type in deferred_checks.DEVICE_TYPES:  # the checks stay on the device: no host read
        return None
    return value.detach()


def nan_free_total(value: object, device: Optional[torch.device] = None) -> Optional[Tensor]:
    """The float64 0-d sum of a floating CPU tensor's values, when that sum shows that none is
    NaN (a NaN makes it NaN); None where the caller must take ``checked_values`` and the NaN
    policy (a NaN, an inf - inf, or another kind of input). One pass: the policy's own NaN
    search is a second pass and a bool temporary, most of a large batch's update."""
    v = _host_floats(value, device)
    if v is None:
        return None
    total = v.to(_F64).sum()
    return total if total.item() == total.item() else None


def nan_free_extreme(value: object, smallest: bool, device: Optional[torch.device] = None) -> Optional[Tensor]:
    """The float64 0-d smallest (or largest) of a floating CPU tensor's values, read in their
    own dtype (exact), when none is NaN (torch's amin / amax give NaN then); else None, as
    ``nan_free_total``."""
    v = _host_floats(value, device)
    if v is None:
        return None
    extreme = v.amin() if smallest else v.amax()
    return extreme.to(_F64) if extreme.item() == extreme.item() else None


def weighted_totals(value: Tensor, weight: Optional[Tensor]) -> Tuple[Tensor, Union[Tensor, int]]:
    """(sum of weight * value as a float64 0-d tensor, sum of weight: a float64 0-d tensor, or
    the number of values when there are no weights)."""
    if weight is None:
        return value.sum(), value.numel()
    return (value * weight).sum(), weight.sum()
