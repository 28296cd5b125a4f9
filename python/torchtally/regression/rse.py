"""``RelativeSquaredError`` (torchmetrics.regression.rse's names). Sum of squared errors over the
target's sum of squared deviations from its mean, per output, averaged over outputs."""

import math
from typing import Any, Dict, List

import torch
from torch import Tensor

from ..base.state_dict import check_nonnegative
from ..functional.regression import batch_sums as sums
from ..functional.regression import compute as reg_compute
from ..functional.regression import fused_sums
from ..functional.regression import update as reg_update
from ..kernels import regression as error_kinds
from .log_mse import F64, RegressionMetric

__all__ = ["RelativeSquaredError"]


class RelativeSquaredError(RegressionMetric):
    """Sum of squared errors over the target's sum of squared deviations from its mean, per
    output, averaged over outputs; ``squared=False`` gives its root (RRSE).

    Inputs [N] (or [N, 1]), or [N, D] with ``num_outputs=D``. An exactly constant target's
    total sum of squares (0) is clamped to the result dtype's eps, as torchmetrics.

    Differences from torchmetrics: the target's sum of squares is kept as Chan-merged moments,
    exact for targets with a large offset (torchmetrics keeps raw sums of squares, whose
    difference loses those digits); a small but non-zero one is not clamped (torchmetrics
    clamps any value below eps, which changes small-scale data's result); NaN/inf inputs and
    a 1-D input with ``num_outputs > 1`` raise ValueError.

        >>> import torch
        >>> from torchtally.regression import RelativeSquaredError
        >>> preds, target = torch.tensor([2.5, 0.0, 2.0, 8.0]), torch.tensor([3.0, -0.5, 2.0, 7.0])
        >>> RelativeSquaredError().update(preds, target).compute()
        tensor(0.0514)
    """

    def __init__(self, num_outputs: int = 1, squared: bool = True, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.num_outputs = reg_update.check_num_outputs(num_outputs)
        self.squared = reg_update.check_squared(squared)
        self.add_state("error_sum", torch.zeros(self.num_outputs, dtype=F64), reduce="sum")
        self.add_state("target_moments", reg_update.empty_moments(self.num_outputs), reduce="merge")

    def update(self, preds: Tensor, target: Tensor) -> None:
        p, t = reg_update.pearson(preds, target, self.num_outputs, self.device)
        # the kernel checks the whole batch before it adds: the moments then take it as it is
        if not fused_sums.added(self.error_sum, None, None, p, t, error_kinds.SQUARED):
            self.error_sum += sums.squared_error_sum(p, t)
        sums.moments_update(self.target_moments, t)

    def compute(self) -> Tensor:
        if self.num_outputs == 1 and self.error_sum.is_cpu and self.target_moments.is_cpu:
            return self._one_output()
        return reg_compute.as_result(
            sums.rse_from(self.error_sum, self.target_moments, self.squared, self.dtype), self.dtype
        )

    def _one_output(self) -> Tensor:
        """sums.rse_from for one output, in Python floats (the same float64 operations)."""
        n, _, _, m2, low, high = self.target_moments[0].tolist()
        ss_tot = 0.0 if low == high else m2  # an exactly constant target: 0 (sums.moments_ss)
        ss_tot = torch.finfo(self.dtype).eps if ss_tot == 0 else ss_tot
        rse = math.nan if n == 0 else self.error_sum.item() / ss_tot
        return reg_compute.scalar_result(rse if self.squared else reg_compute.root(rse), self.dtype)

    def merge_state_values(self, name: str, values: List[Tensor]) -> Tensor:
        return reg_update.merge_moments(values)

    def check_state_invariants(self, states: Dict[str, Tensor]) -> None:
        super().check_state_invariants(states)
        check_nonnegative(states, "error_sum")
        sums.check_moments(states["target_moments"], "target_moments")
