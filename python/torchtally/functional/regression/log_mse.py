"""Regression metrics, functional forms (one batch in, the metric out): log-cosh error, MSLE,
Minkowski distance, NRMSE, RSE, SMAPE, WMAPE, Tweedie deviance, critical success index, and
the KL and Jensen-Shannon divergences. Per-batch sums: batch_sums.py.

Computed in float64; results in the inputs' promoted float dtype (torch's default dtype for
integer inputs), as torchmetrics' functional forms, except critical_success_index (float32,
as torchmetrics). NaN or inf inputs, and values outside a metric's domain, raise ValueError.

    >>> import torch
    >>> from torchtally.functional import log_cosh_error, weighted_mean_absolute_percentage_error
    >>> preds, target = torch.tensor([3.0, 5.0, 2.5, 7.0]), torch.tensor([2.5, 5.0, 4.0, 8.0])
    >>> log_cosh_error(preds, target)
    tensor(0.3523)
    >>> weighted_mean_absolute_percentage_error(preds, target)
    tensor(0.1538)
"""

import torch
from torch import Tensor

from . import batch_sums as sums
from . import update

__all__ = ["mean_squared_log_error"]

F64 = torch.float64


def result(value: Tensor, preds: Tensor, target: Tensor) -> Tensor:
    value = value.to(update.functional_dtype(preds, target))
    return value.reshape(()) if value.numel() == 1 else value


def mean_squared_log_error(preds: Tensor, target: Tensor) -> Tensor:
    """Mean of (log(1 + preds) - log(1 + target))^2 over all elements (values > -1).

    >>> mean_squared_log_error(torch.tensor([0.0, 1.0, 2.0, 3.0]), torch.tensor([0.0, 1.0, 2.0, 2.0]))
    tensor(0.0207)
    """
    total, n = sums.squared_log_error_sum(preds, target)
    return result(total / n, preds, target)


def nrmse_inputs(preds: object, target: object, num_outputs: int):
    if num_outputs == 1:
        p, t = sums.pair(preds, target)
        return p.reshape(-1, 1), t.reshape(-1, 1)
    return update.columns(preds, target, num_outputs)
