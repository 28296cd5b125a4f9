"""``symmetric_mean_absolute_percentage_error``
(torchmetrics.functional.regression.symmetric_mape's names). Mean of ``2 |target - preds| /
max(|target| + |preds|, 1.17e-6)`` over all elements."""

from torch import Tensor

from . import batch_sums as sums
from .log_mse import result

__all__ = ["symmetric_mean_absolute_percentage_error"]


def symmetric_mean_absolute_percentage_error(preds: Tensor, target: Tensor) -> Tensor:
    """Mean of ``2 |target - preds| / max(|target| + |preds|, 1.17e-6)`` over all elements.

    >>> symmetric_mean_absolute_percentage_error(torch.tensor([0.9, 15.0]), torch.tensor([1.0, 10.0]))
    tensor(0.2526)
    """
    total, n = sums.symmetric_percentage_error_sum(preds, target)
    return result(total / n, preds, target)
