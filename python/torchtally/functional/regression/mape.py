"""``mean_absolute_percentage_error`` (torchmetrics.functional.regression.mape's names). Mean of
``|target - preds| / max(|target|, 1.17e-6)`` over all elements (a fraction, not %)."""

from torch import Tensor

from . import update

__all__ = ["mean_absolute_percentage_error"]


def mean_absolute_percentage_error(preds: Tensor, target: Tensor) -> Tensor:
    """Mean of ``|target - preds| / max(|target|, 1.17e-6)`` over all elements (a fraction, not %).

    >>> mean_absolute_percentage_error(torch.tensor([1.0, 3.0]), torch.tensor([2.0, 4.0]))
    tensor(0.3750)
    """
    total, n = update.absolute_percentage_error_sum(preds, target)
    return (total / n).to(update.functional_dtype(preds, target))
