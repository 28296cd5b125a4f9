"""``SymmetricMeanAbsolutePercentageError`` (torchmetrics.regression.symmetric_mape's names). Mean
of ``2 |target - preds| / max(|target| + |preds|, 1.17e-6)`` over all elements (0 to 2)."""

from typing import Any

from torch import Tensor

from ..functional.regression import batch_sums as sums
from ..kernels import regression as error_kinds
from .log_mse import MeanOfSums

__all__ = ["SymmetricMeanAbsolutePercentageError"]


class SymmetricMeanAbsolutePercentageError(MeanOfSums):
    """Mean of ``2 |target - preds| / max(|target| + |preds|, 1.17e-6)`` over all elements (0 to 2).
    Differences from torchmetrics: float64 sums; NaN/inf inputs raise ValueError.

    >>> import torch
    >>> from torchtally.regression import SymmetricMeanAbsolutePercentageError
    >>> m = SymmetricMeanAbsolutePercentageError()
    >>> m.update(torch.tensor([0.9, 15.0, 1.2e6]), torch.tensor([1.0, 10.0, 1e6])).compute()
    tensor(0.2290)
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._add_sums(())

    def update(self, preds: Tensor, target: Tensor) -> None:
        if not self._added(*sums.pair(preds, target, self.device), error_kinds.SYM_PERCENT):
            self._add(*sums.symmetric_percentage_error_sum(preds, target, self.device))
