"""``WeightedMeanAbsolutePercentageError`` (torchmetrics.regression.wmape's names). ``sum |target -
preds| / max(sum |target|, 1.17e-6)``, over all elements seen."""

from typing import Any, Dict

import torch
from torch import Tensor

from ..base.state_dict import check_nonnegative
from ..functional.regression import batch_sums as sums
from ..functional.regression import compute as reg_compute
from ..functional.regression import fused_sums
from ..kernels import regression as error_kinds
from .log_mse import F64, RegressionMetric

__all__ = ["WeightedMeanAbsolutePercentageError"]


class WeightedMeanAbsolutePercentageError(RegressionMetric):
    """``sum |target - preds| / max(sum |target|, 1.17e-6)``, over all elements seen.
    Differences from torchmetrics: float64 sums; NaN/inf inputs raise ValueError.

    >>> import torch
    >>> from torchtally.regression import WeightedMeanAbsolutePercentageError
    >>> m = WeightedMeanAbsolutePercentageError()
    >>> m.update(torch.tensor([0.9, 15.0, 1.2e6]), torch.tensor([1.0, 10.0, 1e6])).compute()
    tensor(0.2000)
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.add_state("error_and_scale", torch.zeros(2, dtype=F64), reduce="sum")

    def update(self, preds: Tensor, target: Tensor) -> None:
        p, t = sums.pair(preds, target, self.device)
        if p.dim() > 2 or p.dim() == 0:
            p, t = p.reshape(-1), t.reshape(-1)
        if fused_sums.added(self.error_and_scale, None, None, p, t, error_kinds.WEIGHTED_PERCENT):
            return
        self.error_and_scale += sums.weighted_percentage_error_sums(preds, target, self.device)

    def compute(self) -> Tensor:
        values = self.error_and_scale.tolist() if self.error_and_scale.is_cpu else None
        if values is not None:
            error, scale = values
            return reg_compute.scalar_result(error / reg_compute.at_least(scale, sums.SMAPE_EPS), self.dtype)
        error, scale = self.error_and_scale
        return reg_compute.as_result(error / scale.clamp(min=sums.SMAPE_EPS), self.dtype)

    def check_state_invariants(self, states: Dict[str, Tensor]) -> None:
        super().check_state_invariants(states)
        check_nonnegative(states, "error_and_scale")
