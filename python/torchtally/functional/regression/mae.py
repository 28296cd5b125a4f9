"""``mean_absolute_error`` (torchmetrics.functional.regression.mae's names). Mean absolute error
(shapes as mean_squared_error)."""

from torch import Tensor

from . import update
from .mse import functional_result

__all__ = ["mean_absolute_error"]


def mean_absolute_error(preds: Tensor, target: Tensor, num_outputs: int = 1) -> Tensor:
    """Mean absolute error (shapes as mean_squared_error).

    >>> mean_absolute_error(torch.tensor([1.0, 2.0]), torch.tensor([1.5, 4.0]))
    tensor(1.2500)
    """
    total, n = update.absolute_error_sum(preds, target, update.check_num_outputs(num_outputs))
    return functional_result(total / n, preds, target, num_outputs)
