"""``MeanAbsolutePercentageError`` (torchmetrics.regression.mape's names). Mean of ``|target -
preds| / max(|target|, 1.17e-6)`` over all elements, as a fraction."""

from typing import Any, Dict

import torch
from torch import Tensor

from ..base.state_dict import check_nonnegative
from ..functional.regression import compute as reg_compute
from ..functional.regression import fused_sums
from ..functional.regression import update as reg_update
from ..kernels import regression as error_kinds
from .mse import F64, RegressionMetric

__all__ = ["MeanAbsolutePercentageError"]


class MeanAbsolutePercentageError(RegressionMetric):
    """Mean of ``|target - preds| / max(|target|, 1.17e-6)`` over all elements, as a fraction.

    A target of 0 gives a huge term (as torchmetrics); scikit-learn clamps at 2.2e-16 instead.
    Differences from torchmetrics: a float64 sum; NaN/inf inputs raise ValueError.

        >>> import torch
        >>> from torchtally.regression import MeanAbsolutePercentageError
        >>> MeanAbsolutePercentageError().update(torch.tensor([1.0, 3.0]), torch.tensor([2.0, 4.0])).compute()
        tensor(0.3750)
    """

    higher_is_better = False

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.add_state("error_sum", torch.tensor(0.0, dtype=F64), reduce="sum")
        self.add_state("num_samples", torch.tensor(0, dtype=torch.int64), reduce="sum")

    def update(self, preds: Tensor, target: Tensor) -> None:
        p, t = reg_update.pair(preds, target, self.device)
        if p.dim() > 2 or p.dim() == 0:
            p, t = p.reshape(-1), t.reshape(-1)
        if fused_sums.added(self.error_sum, self.num_samples, None, p, t, error_kinds.ABS_PERCENT):
            return
        total, n = reg_update.absolute_percentage_error_sum(preds, target, self.device)
        self.error_sum += total
        self.num_samples += n

    def compute(self) -> Tensor:
        return reg_compute.mean_of(self.error_sum, self.num_samples, self.dtype)

    def check_state_invariants(self, states: Dict[str, Tensor]) -> None:
        super().check_state_invariants(states)
        check_nonnegative(states, "error_sum", "num_samples")
