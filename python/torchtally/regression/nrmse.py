"""``NormalizedRootMeanSquaredError`` (torchmetrics.regression.nrmse's names). RMSE divided by the
target's mean, range, standard deviation (population) or L2 norm, per output (``normalization``."""

from typing import TYPE_CHECKING, Any, Dict, List

import torch
from torch import Tensor

from ..base.input_dtype import InputDtypeMixin
from ..base.state_dict import check_nonnegative
from ..functional.regression import batch_sums as sums
from ..functional.regression import compute as reg_compute
from ..functional.regression import update as reg_update
from .log_mse import F64, RegressionMetric

__all__ = ["NormalizedRootMeanSquaredError"]


class NormalizedRootMeanSquaredError(InputDtypeMixin, RegressionMetric):
    """RMSE divided by the target's mean, range, standard deviation (population) or L2 norm,
    per output (``normalization``: "mean", "range", "std", "l2").

    ``num_outputs=1``: inputs of any (equal) shape, every element a sample; ``num_outputs=D``:
    [N, D] inputs and one value per output. State: the squared-error sum and count, and for
    the target its sum ("mean"), min and max ("min" / "max" states, "range"), Chan-merged
    moments ("std") or its sum of squares ("l2"). A zero denominator gives inf or NaN, as
    torchmetrics. Differences from torchmetrics: float64 sums and moments; NaN/inf inputs and a
    1-D input with ``num_outputs > 1`` raise ValueError.

        >>> import torch
        >>> from torchtally.regression import NormalizedRootMeanSquaredError
        >>> preds, target = torch.tensor([0.0, 1.0, 2.0, 3.0]), torch.tensor([0.0, 1.0, 2.0, 2.0])
        >>> NormalizedRootMeanSquaredError(normalization="std").update(preds, target).compute()
        tensor(0.6030)
    """

    if TYPE_CHECKING:  # states declared with add_state (read and assigned as attributes)
        target_min: Tensor
        target_max: Tensor

    def __init__(self, normalization: str = "mean", num_outputs: int = 1, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.normalization = sums.check_normalization(normalization)
        self.num_outputs = d = reg_update.check_num_outputs(num_outputs)
        self.add_state("error_sum", torch.zeros(d, dtype=F64), reduce="sum")
        self.add_state("num_samples", torch.tensor(0, dtype=torch.int64), reduce="sum")
        if self.normalization == "range":
            self.add_state("target_min", torch.full((d,), torch.inf, dtype=F64), reduce="min")
            self.add_state("target_max", torch.full((d,), -torch.inf, dtype=F64), reduce="max")
        elif self.normalization == "std":
            self.add_state("target_moments", reg_update.empty_moments(d), reduce="merge")
        else:  # the target's sum ("mean") or sum of squares ("l2")
            self.add_state("target_sum", torch.zeros(d, dtype=F64), reduce="sum")
        # torchmetrics' result follows the inputs' float dtype only here (its reassigned states)
        self._follows_inputs = d > 1 and self.normalization in ("mean", "range")
        if self._follows_inputs:
            self._add_input_dtype()

    def update(self, preds: Tensor, target: Tensor) -> None:
        if self.num_outputs == 1:
            p, t = sums.pair(preds, target, self.device)
            p, t = p.reshape(-1, 1), t.reshape(-1, 1)
        else:
            p, t = reg_update.columns(preds, target, self.num_outputs, self.device)
        sse = sums.squared_error_sum(p, t)  # checks every value
        if self._follows_inputs:
            self._note_input_dtype(p, t)
        self.error_sum += sse
        self.num_samples += p.shape[0]
        if self.normalization == "range":
            if p.shape[0]:
                self.target_min = torch.minimum(self.target_min, t.amin(0).to(F64))
                self.target_max = torch.maximum(self.target_max, t.amax(0).to(F64))
        elif self.normalization == "std":
            sums.moments_update(self.target_moments, t)
        elif self.normalization == "mean":
            self.target_sum += t.sum(0, dtype=F64)
        else:
            self.target_sum += t.to(F64).square().sum(0)

    def compute(self) -> Tensor:
        n = self.num_samples
        if self.normalization == "range":
            stat = torch.stack((self.target_min, self.target_max))
        elif self.normalization == "std":
            stat = self.target_moments
        else:
            stat = self.target_sum
        value = (self.error_sum / n).sqrt() / sums.nrmse_denominator(self.normalization, n, stat)
        dtype = reg_update.promoted(self.dtype, self._input_code()) if self._follows_inputs else self.dtype
        return reg_compute.as_result(value, dtype)

    def merge_state_values(self, name: str, values: List[Tensor]) -> Tensor:
        return reg_update.merge_moments(values)

    def check_state_invariants(self, states: Dict[str, Tensor]) -> None:
        super().check_state_invariants(states)
        check_nonnegative(states, "error_sum", "num_samples", *(("target_sum",) if self.normalization == "l2" else ()))
        if "target_moments" in states:
            sums.check_moments(states["target_moments"], "target_moments")
        self._check_input_dtype(states)
