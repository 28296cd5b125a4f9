"""``MeanAbsoluteError`` (torchmetrics.regression.mae's names). Mean absolute error (shapes and
differences from torchmetrics as MeanSquaredError)."""

from ..functional.regression import update as reg_update
from ..kernels import regression as error_kinds
from .mse import ErrorMean

__all__ = ["MeanAbsoluteError"]


class MeanAbsoluteError(ErrorMean):
    """Mean absolute error (shapes and differences from torchmetrics as MeanSquaredError).

    >>> import torch
    >>> from torchtally.regression import MeanAbsoluteError
    >>> MeanAbsoluteError().update(torch.tensor([1.0, 2.0]), torch.tensor([1.5, 4.0])).compute()
    tensor(1.2500)
    """

    _error_sum = staticmethod(reg_update.absolute_error_sum)
    _error_kind = error_kinds.ABSOLUTE
