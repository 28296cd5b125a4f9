"""Regression metrics kept as float64 sums: log-cosh error, mean squared log error, Minkowski
distance, normalized RMSE, relative squared error, symmetric and weighted MAPE, Tweedie
deviance. The math lives in torchtally.functional.regression.batch_sums.

torchmetrics' classes with its constructor signatures, accepted inputs, result dtypes and
shapes (a single-element result is 0-d). States are fixed-shape and reduced by "sum" (float64
sums, int64 counts), "min" / "max" (NRMSE's target range), or Chan-merged moments where a
variance is needed (NRMSE's "std", RSE's total sum of squares), so ranks and ``merge_state``
give the single-process value. Results are in ``self.dtype`` (torch's default dtype when the
metric was made), except NRMSE with ``num_outputs > 1`` and normalization "mean" or "range",
whose result is promoted by the inputs' float dtype, as torchmetrics'.

Deliberate differences from torchmetrics, common to these classes:

* float64 accumulators, and a float64 computation of each term (torchmetrics computes in the
  inputs' dtype: a float32 log-cosh overflows for errors above 88);
* NaN or inf inputs, and values outside a metric's domain (MSLE: <= -1; Tweedie: by power, as
  torchmetrics checks), raise ValueError with the state unchanged (torchmetrics lets NaN in);
* a 1-D input with ``num_outputs > 1`` (which torchmetrics spreads over every output) raises
  ValueError; options are checked when the metric is made;
* results carry no gradient (``is_differentiable`` is False).
"""

from typing import Any, Dict, Optional, Tuple

import torch
from torch import Tensor

from ..base.metric import Metric
from ..base.state_dict import check_nonnegative
from ..functional.regression import batch_sums as sums
from ..functional.regression import compute as reg_compute
from ..functional.regression import fused_sums
from ..kernels import regression as error_kinds

__all__ = ["MeanSquaredLogError"]

F64 = torch.float64


class RegressionMetric(Metric):
    is_differentiable = False  # results carry no gradient (see Metric)
    full_state_update = False
    traceable_update = False  # the finiteness and domain checks read the values: eager inside torch.compile
    higher_is_better: Optional[bool] = False


class MeanOfSums(RegressionMetric):
    """A float64 sum of per-element terms (shape ``shape``) and an int64 count; the result is
    their mean (NaN over no samples, as torchmetrics)."""

    _terms_nonnegative = True

    def _add_sums(self, shape: Tuple[int, ...]) -> None:
        self.add_state("error_sum", torch.zeros(shape, dtype=F64), reduce="sum")
        self.add_state("num_samples", torch.tensor(0, dtype=torch.int64), reduce="sum")

    def _added(self, p: Tensor, t: Tensor, kind: int) -> bool:
        """Whether the fused kernel added the checked batch (see fused_sums.added)."""
        if p.dim() > 2 or p.dim() == 0:
            p, t = p.reshape(-1), t.reshape(-1)
        return fused_sums.added(self.error_sum, self.num_samples, None, p, t, kind)

    def _add(self, total: Tensor, n: int) -> None:
        self.error_sum += total
        self.num_samples += n

    def compute(self) -> Tensor:
        return reg_compute.mean_of(self.error_sum, self.num_samples, self.dtype)

    def check_state_invariants(self, states: Dict[str, Tensor]) -> None:
        super().check_state_invariants(states)
        check_nonnegative(states, "num_samples", *(("error_sum",) if self._terms_nonnegative else ()))


class MeanSquaredLogError(MeanOfSums):
    """Mean of (log(1 + preds) - log(1 + target))^2 over all elements (any equal shapes).

    Differences from torchmetrics: values must be > -1 (torchmetrics gives NaN or inf for the
    rest, here a ValueError naming the first one; scikit-learn refuses them too); NaN/inf
    inputs raise ValueError; a float64 sum.

        >>> import torch
        >>> from torchtally.regression import MeanSquaredLogError
        >>> preds, target = torch.tensor([0.0, 1.0, 2.0, 3.0]), torch.tensor([0.0, 1.0, 2.0, 2.0])
        >>> MeanSquaredLogError().update(preds, target).compute()
        tensor(0.0207)
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._add_sums(())

    def update(self, preds: Tensor, target: Tensor) -> None:
        if not self._added(*sums.pair(preds, target, self.device), error_kinds.SQUARED_LOG):
            self._add(*sums.squared_log_error_sum(preds, target, self.device))
