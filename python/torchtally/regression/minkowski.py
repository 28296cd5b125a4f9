"""``MinkowskiDistance`` (torchmetrics.regression.minkowski's names). ``(sum of |preds -
targets|^p)^(1/p)`` over all elements seen, for a finite ``p >= 1``."""

import math
from typing import Any, Dict

import torch
from torch import Tensor

from ..base.state_dict import check_nonnegative
from ..functional.regression import batch_sums as sums
from ..functional.regression import compute as reg_compute
from ..functional.regression import fused_sums
from ..kernels import regression as error_kinds
from .log_mse import F64, RegressionMetric

__all__ = ["MinkowskiDistance"]


class MinkowskiDistance(RegressionMetric):
    """``(sum of |preds - targets|^p)^(1/p)`` over all elements seen, for a finite ``p >= 1``.

    Differences from torchmetrics: ``p`` must be finite (ValueError when the metric is made;
    torchmetrics raises its own TorchMetricsUserError, and accepts p = inf); NaN/inf inputs
    raise ValueError; a float64 sum.

        >>> import torch
        >>> from torchtally.regression import MinkowskiDistance
        >>> preds, targets = torch.tensor([1.0, 2.8, 3.5, 4.5]), torch.tensor([6.1, 2.11, 3.1, 5.6])
        >>> MinkowskiDistance(p=3).update(preds, targets).compute()
        tensor(5.1220)
    """

    def __init__(self, p: float, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.p = sums.check_minkowski_p(p)
        self.add_state("distance_sum", torch.tensor(0.0, dtype=F64), reduce="sum")

    def update(self, preds: Tensor, targets: Tensor) -> None:
        x, y = sums.pair(preds, targets, self.device, ("preds", "targets"))
        if x.dim() > 2 or x.dim() == 0:
            x, y = x.reshape(-1), y.reshape(-1)
        if fused_sums.added(self.distance_sum, None, None, x, y, error_kinds.MINKOWSKI, self.p):
            return
        self.distance_sum += sums.minkowski_sum(preds, targets, self.p, self.device)

    def compute(self) -> Tensor:
        values = reg_compute.scalars(self.distance_sum)
        if values is not None and values[0] >= 0:  # (a negative sum, from a loaded state: torch's NaN)
            exponent = 1.0 / self.p  # torch's pow takes the square root for 0.5
            total = math.sqrt(values[0]) if exponent == 0.5 else values[0] ** exponent
            return reg_compute.scalar_result(total, self.dtype)
        return reg_compute.as_result(self.distance_sum.pow(1.0 / self.p), self.dtype)

    def check_state_invariants(self, states: Dict[str, Tensor]) -> None:
        super().check_state_invariants(states)
        check_nonnegative(states, "distance_sum")
