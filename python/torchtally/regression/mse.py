"""Regression metrics: state declarations; the math lives in torchtally.functional.regression.

torchmetrics' classes with its constructor signatures, accepted inputs, result dtypes and
shapes (a single-element result is 0-d). Error sums are float64 "sum" states; R2, explained
variance and Pearson keep moments merged with Chan's formula ("merge" states). Results are in
``self.dtype`` (torch's default dtype when the metric was made; ``set_dtype`` changes it),
except where torchmetrics' follow the inputs' float dtype: R2Score and ExplainedVariance
(1-D inputs promote ``self.dtype``, [N, D] ones give their own dtype), PearsonCorrCoef ([N, D]
inputs promote ``self.dtype``); CosineSimilarity's are float32, as torchmetrics'.

Over no samples the results are torchmetrics': NaN for the means (MSE, MAE, MAPE, explained
variance, Pearson, with Pearson's warning), a ValueError for R2Score (fewer than 2 samples)
and CosineSimilarity (no rows).

Deliberate differences from torchmetrics:

* exact where torchmetrics approximates: accumulators are float64, and R2 / explained
  variance / Pearson keep Chan-merged moments, so targets with a large offset keep their
  digits (torchmetrics' float32 sums of squares lose them). A constant target (or residual)
  is detected exactly; torchmetrics calls SS_res or SS_tot below 1e-4 (absolute) zero, which
  scores small-scale data 1 or 0, and Pearson gives NaN only for an exactly zero variance
  (torchmetrics: for any variance that is small relative to the largest deviation);
* NaN or inf in preds or target is a ValueError (torchmetrics lets it into the state, where it
  makes every later result NaN);
* inputs torchmetrics would broadcast onto the wrong outputs are a ValueError: a 1-D input
  with ``num_outputs > 1``, or batches with different numbers of outputs;
* results carry no gradient (``is_differentiable`` is False).
"""

from typing import TYPE_CHECKING, Any, Dict, List, Optional, Union

import torch
from torch import Tensor

from ..base.metric import Metric
from ..base.state_dict import check_nonnegative
from ..functional.regression import compute as reg_compute
from ..functional.regression import fused_sums
from ..functional.regression import update as reg_update
from ..kernels import regression as error_kinds

__all__ = ["MeanSquaredError"]

F64 = torch.float64


class RegressionMetric(Metric):
    is_differentiable = False  # results carry no gradient (see Metric)
    full_state_update = False


class ErrorMean(RegressionMetric):
    """Shared body of MSE and MAE: a per-output error sum and a sample count."""

    higher_is_better = False
    _error_sum = staticmethod(reg_update.squared_error_sum)
    _error_kind = error_kinds.SQUARED

    def __init__(self, num_outputs: int = 1, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.num_outputs = reg_update.check_num_outputs(num_outputs)
        self.add_state("error_sum", torch.zeros(self.num_outputs, dtype=F64), reduce="sum")
        self.add_state("num_samples", torch.tensor(0, dtype=torch.int64), reduce="sum")

    def update(self, preds: Tensor, target: Tensor) -> None:
        if self.num_outputs == 1:  # any shape, every element a sample: the kernel reads [N]
            p, t = reg_update.pair(preds, target, self.device)
            if p.dim() != 1:
                p, t = p.reshape(-1), t.reshape(-1)
        else:
            p, t = reg_update.columns(preds, target, self.num_outputs, self.device)
        if fused_sums.added(self.error_sum, self.num_samples, None, p, t, self._error_kind):
            return
        total, n = type(self)._error_sum(preds, target, self.num_outputs, self.device)
        self.error_sum += total
        self.num_samples += n

    def compute(self) -> Tensor:
        return reg_compute.mean_of(self.error_sum, self.num_samples, self.dtype)

    def check_state_invariants(self, states: Dict[str, Tensor]) -> None:
        super().check_state_invariants(states)
        check_nonnegative(states, "error_sum", "num_samples")


class MeanSquaredError(ErrorMean):
    """Mean squared error; ``squared=False`` gives its root (RMSE).

    ``num_outputs=1``: preds and target of any (equal) shape, every element a sample;
    ``num_outputs=D``: [N, D] inputs and one value per output.

    Differences from torchmetrics: float64 sums; NaN/inf inputs and a 1-D input with
    ``num_outputs > 1`` (which torchmetrics spreads over every output) raise ValueError.

        >>> import torch
        >>> from torchtally.regression import MeanSquaredError
        >>> m = MeanSquaredError()
        >>> _ = m.update(torch.tensor([2.5, 0.0]), torch.tensor([3.0, -0.5]))
        >>> _ = m.update(torch.tensor([2.0]), torch.tensor([2.0]))
        >>> m.compute()
        tensor(0.1667)
    """

    def __init__(self, squared: bool = True, num_outputs: int = 1, **kwargs: Any) -> None:
        super().__init__(num_outputs, **kwargs)
        self.squared = reg_update.check_squared(squared)

    def compute(self) -> Tensor:
        values = reg_compute.scalars(self.error_sum, self.num_samples)
        if values is not None:
            mean = reg_compute.ratio(*values)
            return reg_compute.scalar_result(mean if self.squared else reg_compute.root(mean), self.dtype)
        total = self.error_sum / self.num_samples
        return reg_compute.as_result(total if self.squared else total.sqrt(), self.dtype)


class InputFormMixin:
    """An ``input_form`` merge state (see torchtally.functional.regression) and its tracker."""

    if TYPE_CHECKING:  # the Metric this mixin is combined with, and the state it declares
        input_form: Tensor

        @property
        def dtype(self) -> torch.dtype: ...
        def add_state(
            self,
            name: str,
            default: Union[Tensor, List[Any]],
            reduce: Any = None,
            persistent: bool = False,
            *,
            dist_reduce_fx: Any = None,
        ) -> None: ...

    def _add_input_form(self) -> None:
        self.add_state("input_form", torch.empty(0, dtype=torch.int64), reduce="merge")
        self._forms = reg_update.FormTracker()

    def _store_form(self, form: Optional[reg_update.Form]) -> None:
        """Store a form returned by ``self._forms.check`` (None: nothing new)."""
        if form is not None:
            self.input_form = reg_update.form_tensor(form, self.input_form.device)
            self._forms.wrote(self.input_form, form)

    def _result_dtype(self) -> torch.dtype:
        form = reg_update.read_form(self.input_form)
        return reg_update.promoted(self.dtype, form[0] if form else 0)


class ResidualMoments(InputFormMixin, RegressionMetric):
    """Moments of (target - preds) and of target per output: a [2D, 6] "merge" state, D read
    from the first batch, shared by R2Score and ExplainedVariance inside a MetricCollection."""

    higher_is_better = True
    state_key = ("regression_residual_target_moments",)
    _max_dims: Optional[int] = None
    if TYPE_CHECKING:  # a state declared with add_state (read and assigned as an attribute)
        residual_target_moments: Tensor

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.add_state("residual_target_moments", torch.empty(0, 6, dtype=F64), reduce="merge")
        self._add_input_form()

    def update(self, preds: Tensor, target: Tensor) -> None:
        p, t, shape = reg_update.outputs(preds, target, self._max_dims, self.device)
        form = self._forms.check(self.input_form, (reg_update.float_code(p, t),) + shape)
        self.residual_target_moments = reg_update.residual_moments_update(self.residual_target_moments, p, t)
        self._store_form(form)

    def merge_state_values(self, name: str, values: List[Tensor]) -> Tensor:
        if name == "input_form":
            return reg_update.form_merge_values(values)
        return reg_update.merge_moments(values)

    def check_state_invariants(self, states: Dict[str, Tensor]) -> None:
        super().check_state_invariants(states)
        reg_update.check_moments_state("residual_target_moments", states["residual_target_moments"])

    def _result_dtype(self) -> torch.dtype:
        # torchmetrics' state here is a 0-d tensor of the metric's dtype: 1-D inputs (0-d batch
        # sums) promote it, [N, D] ones (dimensioned batch sums) replace its dtype with theirs.
        form = reg_update.read_form(self.input_form)
        code = form[0] if form else 0
        if len(form) <= 1 or code == 0:
            return reg_update.promoted(self.dtype, code)
        return reg_update.CODE_DTYPES[code]
