"""Aggregation: the functional forms weighted_mean and weighted_sum (the value and weight
checks and the NaN policy, shared with the metric classes: update.py).

    >>> import torch
    >>> weighted_mean(torch.tensor([1.0, float("nan"), 3.0]), nan_strategy="ignore")
    tensor(2.)
    >>> weighted_mean(torch.tensor([1.0, 3.0]), torch.tensor([3.0, 1.0]))
    tensor(1.5000)
"""

import torch
from torch import Tensor

from . import update
from .update import NaNValueError  # noqa: F401  (raised by every form here)

__all__ = ["weighted_mean", "weighted_sum"]


def weighted_mean(value: object, weight: object = None, *, nan_strategy: update.NanStrategy = "warn") -> Tensor:
    """sum(weight * value) / sum(weight) over all elements, in torch's default dtype; NaN when
    the weights sum to 0 (e.g. no values), as MeanMetric."""
    strategy = update.check_nan_strategy(nan_strategy)
    total, weight_sum = update.weighted_totals(*update.checked_values(strategy, "value", value, weight))
    return (total / weight_sum).to(torch.get_default_dtype())


def weighted_sum(value: object, weight: object = None, *, nan_strategy: update.NanStrategy = "warn") -> Tensor:
    """sum(weight * value) over all elements, in torch's default dtype; 0 for no values.

    >>> weighted_sum(torch.tensor([1.0, 2.0]), 2.0)
    tensor(6.)
    """
    strategy = update.check_nan_strategy(nan_strategy)
    total, _ = update.weighted_totals(*update.checked_values(strategy, "value", value, weight))
    return total.to(torch.get_default_dtype())
