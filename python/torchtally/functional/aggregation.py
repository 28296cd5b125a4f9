"""Aggregation: value and weight inputs, the NaN policy, and the functional forms.

Values may be Python numbers or real tensors of any shape (bool, integer, floating; read as
float64 and flattened). A weight is None (1 per value), a number, or a tensor broadcastable
to the value's shape; weights must be finite and >= 0.

NaN policy (``nan_strategy``), for values and weights alike:

  "error" (default)  a NaN raises ValueError naming the argument and the first NaN's position;
  "warn"             NaN values (and their weights) are dropped, with a warning;
  "ignore"           dropped silently;
  "disable"          no check: a NaN reaches the state and the result (it is then NaN);
  a float            every NaN is replaced by that number.

    >>> import torch
    >>> weighted_mean(torch.tensor([1.0, float("nan"), 3.0]), nan_strategy="ignore")
    tensor(2., dtype=torch.float64)
    >>> weighted_mean(torch.tensor([1.0, 3.0]), torch.tensor([3.0, 1.0]))
    tensor(1.5000, dtype=torch.float64)
"""
import math
import warnings
from typing import Optional, Tuple, Union

import torch
from torch import Tensor

from ..errors import NotComputableError
from ._reference_checks import describe

__all__ = [
    "weighted_mean",
    "weighted_sum",
]

NanStrategy = Union[str, float]
NAN_STRATEGIES = ("error", "warn", "ignore", "disable")
_F64 = torch.float64


def check_nan_strategy(nan_strategy: object) -> NanStrategy:
    if isinstance(nan_strategy, str) and nan_strategy in NAN_STRATEGIES:
        return nan_strategy
    if isinstance(nan_strategy, (int, float)) and not isinstance(nan_strategy, bool) and not math.isnan(nan_strategy):
        return float(nan_strategy)
    raise ValueError(f"nan_strategy: expected one of {NAN_STRATEGIES} or a float (not NaN), got {nan_strategy!r}")


def as_values(name: str, value: object, device: Optional[torch.device] = None) -> Tensor:
    """A Python number or real tensor as a float64 tensor (shape kept), on ``device``."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return torch.tensor(float(value), dtype=_F64, device=device)
    if not isinstance(value, Tensor):
        raise TypeError(f"{name}: expected a tensor or a Python number, got {type(value).__name__}")
    if value.is_complex():
        raise TypeError(f"{name}: expected a real tensor, got {describe(value)}")
    if device is not None and value.device != device:
        raise ValueError(f"{name}: expected a tensor on {device} (the metric's device), got {value.device}")
    return value.detach().to(_F64)


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


def apply_nan_strategy(strategy: NanStrategy, name: str, value: Tensor,
                       weight: Optional[Tensor] = None) -> Tuple[Tensor, Optional[Tensor]]:
    """Flatten value (and weight) and apply the NaN policy; then check the weights' range."""
    value = value.reshape(-1)
    weight = None if weight is None else weight.reshape(-1)
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
            i = int(bad.nonzero()[0, 0])
            raise ValueError(f"weight: expected finite weights >= 0, got {float(weight[i])} at flat index {i}")
    return value, weight


def _handle_nans(strategy, name, value, weight, nan):
    if strategy == "error":
        i = int(nan.nonzero()[0, 0])
        which = name if bool(torch.isnan(value[i])) else "weight"
        raise ValueError(f"{which}: NaN at flat index {i} (nan_strategy='error'; use 'ignore' to drop NaNs)")
    if isinstance(strategy, float):
        value = torch.nan_to_num(value, nan=strategy)
        return value, None if weight is None else torch.nan_to_num(weight, nan=strategy)
    if strategy == "warn":
        warnings.warn(f"{name}: {int(nan.sum())} NaN value(s) dropped (nan_strategy='warn')", stacklevel=4)
    keep = ~nan
    return value[keep], None if weight is None else weight[keep]


def weighted_mean(value: object, weight: object = None, *, nan_strategy: NanStrategy = "error") -> Tensor:
    """sum(weight * value) / sum(weight) over all elements (float64).

    Raises NotComputableError when the weights sum to 0 (e.g. no values).
    """
    strategy = check_nan_strategy(nan_strategy)
    v = as_values("value", value)
    v, w = apply_nan_strategy(strategy, "value", v, as_weights(weight, v))
    total, weight_sum = ((v * w).sum(), w.sum()) if w is not None else (v.sum(), torch.tensor(float(v.numel())))
    if float(weight_sum) == 0:
        raise NotComputableError("weighted_mean: the weights sum to 0 (no values), the mean is undefined")
    return total / weight_sum


def weighted_sum(value: object, weight: object = None, *, nan_strategy: NanStrategy = "error") -> Tensor:
    """sum(weight * value) over all elements (float64); 0 for no values.

        >>> weighted_sum(torch.tensor([1.0, 2.0]), 2.0)
        tensor(6., dtype=torch.float64)
    """
    strategy = check_nan_strategy(nan_strategy)
    v = as_values("value", value)
    v, w = apply_nan_strategy(strategy, "value", v, as_weights(weight, v))
    return (v * w).sum() if w is not None else v.sum()
