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
from ..functional.regression import update as reg_update

__all__ = [
    "ConcordanceCorrCoef",
    "CosineSimilarity",
    "ExplainedVariance",
    "MeanAbsoluteError",
    "MeanAbsolutePercentageError",
    "MeanSquaredError",
    "PearsonCorrCoef",
    "R2Score",
]

_F64 = torch.float64


class _RegressionMetric(Metric):
    is_differentiable = False  # results carry no gradient (see Metric)
    full_state_update = False


class _ErrorMean(_RegressionMetric):
    """Shared body of MSE and MAE: a per-output error sum and a sample count."""

    higher_is_better = False
    _error_sum = staticmethod(reg_update.squared_error_sum)

    def __init__(self, num_outputs: int = 1, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.num_outputs = reg_update.check_num_outputs(num_outputs)
        self.add_state("error_sum", torch.zeros(self.num_outputs, dtype=_F64), reduce="sum")
        self.add_state("num_samples", torch.tensor(0, dtype=torch.int64), reduce="sum")

    def update(self, preds: Tensor, target: Tensor) -> None:
        total, n = type(self)._error_sum(preds, target, self.num_outputs, self.device)
        self.error_sum += total
        self.num_samples += n

    def compute(self) -> Tensor:
        return reg_compute.mean_of(self.error_sum, self.num_samples, self.dtype)

    def check_state_invariants(self, states: Dict[str, Tensor]) -> None:
        super().check_state_invariants(states)
        check_nonnegative(states, "error_sum", "num_samples")


class MeanSquaredError(_ErrorMean):
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
        total = self.error_sum / self.num_samples
        return reg_compute.as_result(total if self.squared else total.sqrt(), self.dtype)


class MeanAbsoluteError(_ErrorMean):
    """Mean absolute error (shapes and differences from torchmetrics as MeanSquaredError).

    >>> import torch
    >>> from torchtally.regression import MeanAbsoluteError
    >>> MeanAbsoluteError().update(torch.tensor([1.0, 2.0]), torch.tensor([1.5, 4.0])).compute()
    tensor(1.2500)
    """

    _error_sum = staticmethod(reg_update.absolute_error_sum)


class MeanAbsolutePercentageError(_RegressionMetric):
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
        self.add_state("error_sum", torch.tensor(0.0, dtype=_F64), reduce="sum")
        self.add_state("num_samples", torch.tensor(0, dtype=torch.int64), reduce="sum")

    def update(self, preds: Tensor, target: Tensor) -> None:
        total, n = reg_update.absolute_percentage_error_sum(preds, target, self.device)
        self.error_sum += total
        self.num_samples += n

    def compute(self) -> Tensor:
        return reg_compute.mean_of(self.error_sum, self.num_samples, self.dtype)

    def check_state_invariants(self, states: Dict[str, Tensor]) -> None:
        super().check_state_invariants(states)
        check_nonnegative(states, "error_sum", "num_samples")


class _InputFormMixin:
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


class _ResidualMoments(_InputFormMixin, _RegressionMetric):
    """Moments of (target - preds) and of target per output: a [2D, 6] "merge" state, D read
    from the first batch, shared by R2Score and ExplainedVariance inside a MetricCollection."""

    higher_is_better = True
    state_key = ("regression_residual_target_moments",)
    _max_dims: Optional[int] = None
    if TYPE_CHECKING:  # a state declared with add_state (read and assigned as an attribute)
        residual_target_moments: Tensor

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.add_state("residual_target_moments", torch.empty(0, 6, dtype=_F64), reduce="merge")
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


class R2Score(_ResidualMoments):
    """Coefficient of determination, 1 - SS_res / SS_tot, per output then averaged.

    Inputs [N] or [N, D]; the number of outputs D is read from the first batch (as
    torchmetrics). ``multioutput``: "raw_values", "uniform_average" or "variance_weighted"
    (NaN when every target is constant, as torchmetrics' 0 / 0). ``adjusted=k``: adjusted R2
    for k regressors (with a warning and the plain R2 when k >= n - 1). A constant target gives
    1 for perfect predictions, else 0; fewer than 2 samples raise ValueError (as torchmetrics).

    Differences from torchmetrics: exact where it approximates (Chan-merged moments keep the
    digits of targets with a large offset; a constant target is detected exactly, where
    torchmetrics calls a sum of squares below 1e-4 zero and scores small-scale data 0 or 1);
    NaN/inf inputs, and batches with different numbers of outputs, raise ValueError.

        >>> import torch
        >>> from torchtally.regression import R2Score
        >>> R2Score().update(torch.tensor([2.5, 0.0, 2.0, 8.0]), torch.tensor([3.0, -0.5, 2.0, 7.0])).compute()
        tensor(0.9486)
        >>> R2Score(multioutput="raw_values").update(torch.tensor([[0.5, 1.0], [-1.0, 1.0], [7.0, -6.0]]),
        ...                                          torch.tensor([[0.0, 2.0], [-1.0, 2.0], [8.0, -5.0]])).compute()
        tensor([0.9743, 0.9082])
    """

    _max_dims = 2

    def __init__(self, adjusted: int = 0, multioutput: str = "uniform_average", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.adjusted = reg_update.check_adjusted(adjusted)
        self.multioutput = reg_update.check_multioutput(multioutput)

    def compute(self) -> Tensor:
        score = reg_compute.r2_from_moments(self.residual_target_moments, self.multioutput, self.adjusted)
        return reg_compute.as_result(score, self._result_dtype())


class ExplainedVariance(_ResidualMoments):
    """Explained variance, 1 - Var(target - preds) / Var(target), per output then averaged.

    Inputs [N] or [N, d1, ...] (dim 0 holds samples; "raw_values" has the shape [d1, ...]);
    ``multioutput`` as R2Score. A constant target gives 1 when the residual is constant too,
    else 0 (as torchmetrics and scikit-learn); NaN over no samples. Differences from
    torchmetrics as R2Score (moments instead of float32 sums of squares).

        >>> import torch
        >>> from torchtally.regression import ExplainedVariance
        >>> preds, target = torch.tensor([2.5, 0.0, 2.0, 8.0]), torch.tensor([3.0, -0.5, 2.0, 7.0])
        >>> ExplainedVariance().update(preds, target).compute()
        tensor(0.9572)
    """

    def __init__(self, multioutput: str = "uniform_average", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.multioutput = reg_update.check_multioutput(multioutput)

    def compute(self) -> Tensor:
        score = reg_compute.explained_variance_from_moments(self.residual_target_moments, self.multioutput)
        form = reg_update.read_form(self.input_form)
        if self.multioutput == "raw_values" and len(form) > 2:
            score = score.reshape(form[1:])
        return reg_compute.as_result(score, self._result_dtype())


class PearsonCorrCoef(_InputFormMixin, _RegressionMetric):
    """Pearson correlation of preds and target per output ([N] or [N, D] with D = num_outputs).

    Co-moments are merged with Chan's formula. An output whose preds or target have zero
    variance (exactly constant), or fewer than 2 samples, gives NaN with a warning.

    Differences from torchmetrics: exact where it approximates (it gives NaN whenever a variance
    is small against the largest deviation, e.g. float32 inputs of magnitude 1e-20; here only
    for a variance of exactly 0); NaN/inf inputs and a 1-D input with ``num_outputs > 1``
    raise ValueError.

        >>> import torch
        >>> from torchtally.regression import PearsonCorrCoef
        >>> PearsonCorrCoef().update(torch.tensor([1.0, 2.0, 3.0]), torch.tensor([1.0, 2.0, 2.5])).compute()
        tensor(0.9820)
    """

    higher_is_better: Optional[bool] = None  # both -1 and 1 are optimal
    full_state_update = True

    def __init__(self, num_outputs: int = 1, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.num_outputs = reg_update.check_num_outputs(num_outputs)
        self.add_state("comoments", torch.zeros(self.num_outputs, 6, dtype=_F64), reduce="merge")
        self._add_input_form()
        # shared with ConcordanceCorrCoef in a MetricCollection
        self.state_key = ("regression_pearson_comoments", self.num_outputs)

    def update(self, preds: Tensor, target: Tensor) -> None:
        p, t = reg_update.pearson(preds, target, self.num_outputs, self.device)
        # torchmetrics' result dtype is promoted by [N, D] inputs only (1-D ones give 0-d batch
        # statistics, which torch's type promotion does not let change a state's dtype).
        code = reg_update.float_code(p, t) if preds.dim() == 2 else 0
        form = self._forms.check(self.input_form, (code,))
        reg_update.comoments_update(self.comoments, p, t)
        self._store_form(form)

    def merge_state_values(self, name: str, values: List[Tensor]) -> Tensor:
        if name == "input_form":
            return reg_update.form_merge_values(values)
        return reg_update.merge_moments(values, comoments=True)

    def check_state_invariants(self, states: Dict[str, Tensor]) -> None:
        super().check_state_invariants(states)
        reg_update.check_moments_state("comoments", states["comoments"], comoments=True)

    def compute(self) -> Tensor:
        return reg_compute.as_result(reg_compute.pearson_from_comoments(self.comoments), self._result_dtype())


class ConcordanceCorrCoef(PearsonCorrCoef):
    """Lin's concordance correlation per output ([N] or [N, D] with D = num_outputs):
    2 r s_x s_y / (s_x^2 + s_y^2 + (mean_x - mean_y)^2), with r Pearson's correlation and s^2
    the sample variances (n - 1 in the denominator, as torchmetrics).

    Computed from Pearson's co-moments state (float64, Chan-merged), so a MetricCollection
    holding both keeps it once (the same ``state_key``). NaN, with a warning, where Pearson's
    correlation is NaN (a constant column, fewer than 2 samples), as torchmetrics. Differences
    from torchmetrics: as PearsonCorrCoef's (exact co-moments; NaN/inf inputs raise ValueError).

        >>> import torch
        >>> from torchtally.regression import ConcordanceCorrCoef
        >>> preds, target = torch.tensor([2.5, 0.0, 2.0, 8.0]), torch.tensor([3.0, -0.5, 2.0, 7.0])
        >>> ConcordanceCorrCoef().update(preds, target).compute()
        tensor(0.9777)
    """

    higher_is_better = True

    def compute(self) -> Tensor:
        return reg_compute.as_result(reg_compute.concordance_from_comoments(self.comoments), self._result_dtype())


class CosineSimilarity(_RegressionMetric):
    """Cosine similarity of each row of [N, d] preds with the same row of target, reduced.

    ``reduction``: "sum" (default, as torchmetrics) or "mean" keep two numbers; "none" (or
    None) keeps every row's similarity (a "cat" state of 8 bytes per row) and returns them all,
    in the order seen (across ranks: rank 0's rows, then rank 1's, ...). A zero row gives NaN.
    Results are float32, as torchmetrics' (``set_dtype`` changes that). Over no rows: a
    ValueError, as torchmetrics. Differences from torchmetrics: computed in float64, from two
    numbers per metric (or one per row for "none") instead of every input row; NaN/inf inputs
    raise ValueError; after updates with 0 rows only, still a ValueError (torchmetrics: 0 for
    "sum", NaN for "mean").

        >>> import torch
        >>> from torchtally.regression import CosineSimilarity
        >>> m = CosineSimilarity(reduction="mean")
        >>> m.update(torch.tensor([[1.0, 0.0], [1.0, 1.0]]), torch.tensor([[1.0, 0.0], [0.0, 1.0]])).compute()
        tensor(0.8536)
    """

    higher_is_better = True

    def __init__(self, reduction: Optional[str] = "sum", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.reduction = reg_update.check_cosine_reduction(reduction)
        self.set_dtype(torch.float32)  # torchmetrics computes it in float32 whatever the default dtype
        if self.reduction in ("none", None):
            self.add_state("similarities", torch.empty(0, dtype=_F64), reduce="cat")
        else:
            self.add_state("similarity_sum", torch.tensor(0.0, dtype=_F64), reduce="sum")
            self.add_state("num_rows", torch.tensor(0, dtype=torch.int64), reduce="sum")

    def update(self, preds: Tensor, target: Tensor) -> None:
        sims = reg_update.cosine_rows(preds, target, self.device)
        if self.reduction in ("none", None):
            self.append_state("similarities", sims, copy=False)  # computed here: a fresh tensor
        else:
            self.similarity_sum += sims.sum()
            self.num_rows += sims.numel()

    def compute(self) -> Tensor:
        if self.reduction in ("none", None):
            sims = self.similarities
            if sims.numel() == 0:
                raise self._no_rows()
            return reg_compute.as_result(sims, self.dtype)
        n = int(self.num_rows)
        if n == 0:
            raise self._no_rows()
        total = self.similarity_sum if self.reduction == "sum" else self.similarity_sum / n
        return reg_compute.as_result(total, self.dtype)

    def check_state_invariants(self, states: Dict[str, Tensor]) -> None:
        super().check_state_invariants(states)
        check_nonnegative(states, "num_rows")

    def _no_rows(self) -> ValueError:
        return ValueError("CosineSimilarity: no rows were seen, there is nothing to reduce (No samples to concatenate)")
