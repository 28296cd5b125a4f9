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

from typing import TYPE_CHECKING, Any, Dict, List, Optional, Tuple, Union

import torch
from torch import Tensor

from ..base.metric import Metric
from ..base.state_dict import check_nonnegative
from ..functional.regression import batch_sums as sums
from ..functional.regression import compute as reg_compute
from ..functional.regression import update as reg_update

__all__ = [
    "LogCoshError",
    "MeanSquaredLogError",
    "MinkowskiDistance",
    "NormalizedRootMeanSquaredError",
    "RelativeSquaredError",
    "SymmetricMeanAbsolutePercentageError",
    "TweedieDevianceScore",
    "WeightedMeanAbsolutePercentageError",
]

_F64 = torch.float64


class InputDtypeMixin:
    """The widest float dtype of the inputs seen, for results that follow it (as torchmetrics'
    do where its state is promoted by the inputs): a 1-element int64 "max" state holding a
    ``FLOAT_CODES`` code (0: integer inputs only, or none), rewritten only when a wider dtype
    arrives, so an update reads nothing back from the device."""

    if TYPE_CHECKING:  # the Metric this mixin is combined with, and the state it declares
        input_float: Tensor

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

    def _add_input_dtype(self) -> None:
        self.add_state("input_float", torch.zeros(1, dtype=torch.int64), reduce="max")
        self._float_seen = reg_update.FormTracker()

    def _note_input_dtype(self, *tensors: Tensor) -> None:
        form = self._float_seen.check(self.input_float, (reg_update.float_code(*tensors),))
        if form is not None:
            self.input_float = reg_update.form_tensor(form, self.input_float.device)
            self._float_seen.wrote(self.input_float, form)

    def _input_code(self) -> int:
        return int(self.input_float[0])

    def _check_input_dtype(self, states: Dict[str, Tensor]) -> None:
        code = states.get("input_float")
        if code is not None and code.numel() and not 0 <= int(code.min()) <= int(code.max()) <= 4:
            raise ValueError(f"'input_float': expected a float dtype code in 0..4, got {code.tolist()}")


class _RegressionMetric(Metric):
    is_differentiable = False  # results carry no gradient (see Metric)
    full_state_update = False
    traceable_update = False  # the finiteness and domain checks read the values: eager inside torch.compile
    higher_is_better: Optional[bool] = False


class _MeanOfSums(_RegressionMetric):
    """A float64 sum of per-element terms (shape ``shape``) and an int64 count; the result is
    their mean (NaN over no samples, as torchmetrics)."""

    _terms_nonnegative = True

    def _add_sums(self, shape: Tuple[int, ...]) -> None:
        self.add_state("error_sum", torch.zeros(shape, dtype=_F64), reduce="sum")
        self.add_state("num_samples", torch.tensor(0, dtype=torch.int64), reduce="sum")

    def _add(self, total: Tensor, n: int) -> None:
        self.error_sum += total
        self.num_samples += n

    def compute(self) -> Tensor:
        return reg_compute.mean_of(self.error_sum, self.num_samples, self.dtype)

    def check_state_invariants(self, states: Dict[str, Tensor]) -> None:
        super().check_state_invariants(states)
        check_nonnegative(states, "num_samples", *(("error_sum",) if self._terms_nonnegative else ()))


class LogCoshError(_MeanOfSums):
    """Mean of log(cosh(preds - target)): [N] (or [N, 1]) inputs, or [N, D] with
    ``num_outputs=D`` (one value per output).

    Differences from torchmetrics: computed as log1p(2 sinh(e/2)^2) in float64, so small
    errors keep their digits and large ones do not overflow (torchmetrics: exp(e) in the
    inputs' dtype, inf above 88 in float32); NaN/inf inputs and a 1-D input with
    ``num_outputs > 1`` raise ValueError.

        >>> import torch
        >>> from torchtally.regression import LogCoshError
        >>> LogCoshError().update(torch.tensor([3.0, 5.0, 2.5, 7.0]), torch.tensor([2.5, 5.0, 4.0, 8.0])).compute()
        tensor(0.3523)
        >>> m = LogCoshError(num_outputs=2)
        >>> m.update(torch.tensor([[3.0, 5.0], [-2.0, 2.5]]), torch.tensor([[2.5, 5.0], [0.0, 4.0]])).compute()
        tensor([0.7226, 0.4277])
    """

    def __init__(self, num_outputs: int = 1, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.num_outputs = reg_update.check_num_outputs(num_outputs)
        self._add_sums((self.num_outputs,))

    def update(self, preds: Tensor, target: Tensor) -> None:
        p, t = reg_update.pearson(preds, target, self.num_outputs, self.device)
        self._add(sums.log_cosh_sum(p, t), p.shape[0])


class MeanSquaredLogError(_MeanOfSums):
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
        self._add(*sums.squared_log_error_sum(preds, target, self.device))


class MinkowskiDistance(_RegressionMetric):
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
        self.add_state("distance_sum", torch.tensor(0.0, dtype=_F64), reduce="sum")

    def update(self, preds: Tensor, targets: Tensor) -> None:
        self.distance_sum += sums.minkowski_sum(preds, targets, self.p, self.device)

    def compute(self) -> Tensor:
        return reg_compute.as_result(self.distance_sum.pow(1.0 / self.p), self.dtype)

    def check_state_invariants(self, states: Dict[str, Tensor]) -> None:
        super().check_state_invariants(states)
        check_nonnegative(states, "distance_sum")


class NormalizedRootMeanSquaredError(InputDtypeMixin, _RegressionMetric):
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
        self.add_state("error_sum", torch.zeros(d, dtype=_F64), reduce="sum")
        self.add_state("num_samples", torch.tensor(0, dtype=torch.int64), reduce="sum")
        if self.normalization == "range":
            self.add_state("target_min", torch.full((d,), torch.inf, dtype=_F64), reduce="min")
            self.add_state("target_max", torch.full((d,), -torch.inf, dtype=_F64), reduce="max")
        elif self.normalization == "std":
            self.add_state("target_moments", reg_update.empty_moments(d), reduce="merge")
        else:  # the target's sum ("mean") or sum of squares ("l2")
            self.add_state("target_sum", torch.zeros(d, dtype=_F64), reduce="sum")
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
                self.target_min = torch.minimum(self.target_min, t.amin(0).to(_F64))
                self.target_max = torch.maximum(self.target_max, t.amax(0).to(_F64))
        elif self.normalization == "std":
            sums.moments_update(self.target_moments, t)
        elif self.normalization == "mean":
            self.target_sum += t.sum(0, dtype=_F64)
        else:
            self.target_sum += t.to(_F64).square().sum(0)

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


class RelativeSquaredError(_RegressionMetric):
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
        self.add_state("error_sum", torch.zeros(self.num_outputs, dtype=_F64), reduce="sum")
        self.add_state("target_moments", reg_update.empty_moments(self.num_outputs), reduce="merge")

    def update(self, preds: Tensor, target: Tensor) -> None:
        p, t = reg_update.pearson(preds, target, self.num_outputs, self.device)
        self.error_sum += sums.squared_error_sum(p, t)
        sums.moments_update(self.target_moments, t)

    def compute(self) -> Tensor:
        return reg_compute.as_result(
            sums.rse_from(self.error_sum, self.target_moments, self.squared, self.dtype), self.dtype
        )

    def merge_state_values(self, name: str, values: List[Tensor]) -> Tensor:
        return reg_update.merge_moments(values)

    def check_state_invariants(self, states: Dict[str, Tensor]) -> None:
        super().check_state_invariants(states)
        check_nonnegative(states, "error_sum")
        sums.check_moments(states["target_moments"], "target_moments")


class SymmetricMeanAbsolutePercentageError(_MeanOfSums):
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
        self._add(*sums.symmetric_percentage_error_sum(preds, target, self.device))


class WeightedMeanAbsolutePercentageError(_RegressionMetric):
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
        self.add_state("error_and_scale", torch.zeros(2, dtype=_F64), reduce="sum")

    def update(self, preds: Tensor, target: Tensor) -> None:
        self.error_and_scale += sums.weighted_percentage_error_sums(preds, target, self.device)

    def compute(self) -> Tensor:
        error, scale = self.error_and_scale
        return reg_compute.as_result(error / scale.clamp(min=sums.SMAPE_EPS), self.dtype)

    def check_state_invariants(self, states: Dict[str, Tensor]) -> None:
        super().check_state_invariants(states)
        check_nonnegative(states, "error_and_scale")


class TweedieDevianceScore(_MeanOfSums):
    """Mean Tweedie deviance of all elements for ``power``: 0 squared error, 1 Poisson, 2 Gamma,
    3 inverse Gaussian, others by the general formula (0 < power < 1 is undefined: ValueError).

    Domains, checked on every batch (ValueError naming the first bad element, state unchanged):
    power < 0: preds > 0; 1 <= power < 2: preds > 0 and targets >= 0; power >= 2: both > 0.
    Differences from torchmetrics: float64 terms and sum; NaN/inf inputs, and an infinite
    ``power``, raise ValueError.

        >>> import torch
        >>> from torchtally.regression import TweedieDevianceScore
        >>> m = TweedieDevianceScore(power=2)
        >>> m.update(torch.tensor([4.0, 3.0, 2.0, 1.0]), torch.tensor([1.0, 2.0, 3.0, 4.0])).compute()
        tensor(1.2083)
    """

    higher_is_better = None
    _terms_nonnegative = False  # a deviance is >= 0, but its float sum may round below

    def __init__(self, power: float = 0.0, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.power = sums.check_power(power)
        self._add_sums(())

    def update(self, preds: Tensor, targets: Tensor) -> None:
        self._add(*sums.tweedie_deviance_sum(preds, targets, self.power, self.device))
