"""``weighted_mean_absolute_percentage_error`` (torchmetrics.functional.regression.wmape's names).
``sum |target - preds| / max(sum |target|, 1.17e-6)``."""

from torch import Tensor

from . import batch_sums as sums
from .log_mse import result

__all__ = ["weighted_mean_absolute_percentage_error"]


def weighted_mean_absolute_percentage_error(preds: Tensor, target: Tensor) -> Tensor:
    """``sum |target - preds| / max(sum |target|, 1.17e-6)``.

    >>> weighted_mean_absolute_percentage_error(torch.tensor([0.9, 15.0]), torch.tensor([1.0, 10.0]))
    tensor(0.4636)
    """
    s = sums.weighted_percentage_error_sums(preds, target)
    return result(s[0] / s[1].clamp(min=sums.SMAPE_EPS), preds, target)
