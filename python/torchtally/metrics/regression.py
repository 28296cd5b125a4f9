"""Regression metrics: state declarations; the math lives in torchtally.functional.regression.

Inputs are floating or integer tensors with finite values (NaN or inf raise ValueError and
leave the state unchanged). Results are float64. An epoch with no samples raises
NotComputableError. Error sums are float64 "sum" states; R2, explained variance and Pearson
keep moments merged with Chan's formula ("merge" states), exact for large offsets.
"""
from typing import Any, List, Optional

import torch
from torch import Tensor

from ..functional import _regression_inputs as inp
from ..functional import regression as F
from ..metric import Metric

__all__ = [
    "CosineSimilarity",
    "ExplainedVariance",
    "MeanAbsoluteError",
    "MeanAbsolutePercentageError",
    "MeanSquaredError",
    "PearsonCorrCoef",
    "R2Score",
]

_F64 = torch.float64


class _ErrorMean(Metric):
    """Shared body of MSE and MAE: a per-output error sum and a sample count."""

    _error_sum = staticmethod(F.squared_error_sum)

    def __init__(self, *, num_outputs: int = 1, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.num_outputs = inp.check_num_outputs(num_outputs)
        self.add_state("error_sum", torch.zeros(self.num_outputs, dtype=_F64), reduce="sum")
        self.add_state("num_samples", torch.tensor(0, dtype=torch.int64), reduce="sum")

    def update(self, preds: Tensor, target: Tensor) -> None:
        total, n = type(self)._error_sum(preds, target, self.num_outputs, self.device)
        self.error_sum += total
        self.num_samples += n

    def compute(self) -> Tensor:
        return F.mean_of(self.error_sum, self.num_samples, type(self).__name__)


class MeanSquaredError(_ErrorMean):
    """Mean squared error; ``squared=False`` gives its root (RMSE).

    ``num_outputs=1``: preds and target of any (equal) shape, every element a sample;
    ``num_outputs=D``: [N, D] inputs and one value per output.

        >>> import torch
        >>> from torchtally import MeanSquaredError
        >>> m = MeanSquaredError()
        >>> _ = m.update(torch.tensor([2.5, 0.0]), torch.tensor([3.0, -0.5]))
        >>> _ = m.update(torch.tensor([2.0]), torch.tensor([2.0]))
        >>> m.compute()
        tensor(0.1667, dtype=torch.float64)
    """

    def __init__(self, *, squared: bool = True, num_outputs: int = 1, **kwargs: Any) -> None:
        super().__init__(num_outputs=num_outputs, **kwargs)
        self.squared = bool(squared)

    def compute(self) -> Tensor:
        mse = super().compute()
        return mse if self.squared else mse.sqrt()


class MeanAbsoluteError(_ErrorMean):
    """Mean absolute error (shapes as MeanSquaredError).

        >>> import torch
        >>> from torchtally import MeanAbsoluteError
        >>> MeanAbsoluteError().update(torch.tensor([1.0, 2.0]), torch.tensor([1.5, 4.0])).compute()
        tensor(1.2500, dtype=torch.float64)
    """

    _error_sum = staticmethod(F.absolute_error_sum)


class MeanAbsolutePercentageError(Metric):
    """Mean of |target - preds| / max(|target|, 1.18e-38) over all elements, as a fraction.

    A target of 0 gives a huge term (as torchmetrics); scikit-learn clamps at 2.2e-16 instead.

        >>> import torch
        >>> from torchtally import MeanAbsolutePercentageError
        >>> MeanAbsolutePercentageError().update(torch.tensor([1.0, 3.0]), torch.tensor([2.0, 4.0])).compute()
        tensor(0.3750, dtype=torch.float64)
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.add_state("error_sum", torch.tensor(0.0, dtype=_F64), reduce="sum")
        self.add_state("num_samples", torch.tensor(0, dtype=torch.int64), reduce="sum")

    def update(self, preds: Tensor, target: Tensor) -> None:
        total, n = F.absolute_percentage_error_sum(preds, target, self.device)
        self.error_sum += total
        self.num_samples += n

    def compute(self) -> Tensor:
        return F.mean_of(self.error_sum, self.num_samples, "MeanAbsolutePercentageError")


class _ResidualMoments(Metric):
    """Moments of (target - preds) and of target per output: a [2D, 6] "merge" state, shared
    by R2Score and ExplainedVariance of the same num_outputs inside a MetricCollection."""

    def __init__(self, *, num_outputs: int = 1, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.num_outputs = inp.check_num_outputs(num_outputs)
        self.add_state("residual_target_moments", F.empty_moments(2 * self.num_outputs), reduce="merge")
        self.state_key = ("residual_target_moments", self.num_outputs)

    def update(self, preds: Tensor, target: Tensor) -> None:
        F.residual_moments_update(self.residual_target_moments, preds, target, self.num_outputs)

    def merge_state_values(self, name: str, values: List[Tensor]) -> Tensor:
        return F.merge_moments(values)


class R2Score(_ResidualMoments):
    """Coefficient of determination, 1 - SS_res / SS_tot, per output then averaged.

    Inputs [N] (or [N, 1]) for ``num_outputs=1``, [N, D] for D outputs (torchmetrics infers D;
    here it is declared, because the state's shape is). ``multioutput``: "raw_values",
    "uniform_average" or "variance_weighted". ``adjusted=k``: adjusted R2 for k regressors
    (with a warning and the plain R2 when k >= n - 1). A constant target gives 1 for perfect
    predictions, else 0; fewer than 2 samples give NaN (both as scikit-learn).

        >>> import torch
        >>> from torchtally import R2Score
        >>> R2Score().update(torch.tensor([2.5, 0.0, 2.0, 8.0]), torch.tensor([3.0, -0.5, 2.0, 7.0])).compute()
        tensor(0.9486, dtype=torch.float64)
    """

    def __init__(self, *, num_outputs: int = 1, multioutput: str = "uniform_average", adjusted: int = 0,
                 **kwargs: Any) -> None:
        super().__init__(num_outputs=num_outputs, **kwargs)
        self.multioutput = inp.check_multioutput(multioutput)
        self.adjusted = inp.check_adjusted(adjusted)

    def compute(self) -> Tensor:
        return F.r2_from_moments(self.residual_target_moments, self.multioutput, self.adjusted)


class ExplainedVariance(_ResidualMoments):
    """Explained variance, 1 - Var(target - preds) / Var(target), per output then averaged.

    Shapes, ``num_outputs`` and ``multioutput`` as R2Score. A constant target gives 1 when the
    residual is constant too, else 0 (as scikit-learn).

        >>> import torch
        >>> from torchtally import ExplainedVariance
        >>> ExplainedVariance().update(torch.tensor([2.5, 0.0, 2.0, 8.0]), torch.tensor([3.0, -0.5, 2.0, 7.0])).compute()
        tensor(0.9572, dtype=torch.float64)
    """

    def __init__(self, *, num_outputs: int = 1, multioutput: str = "uniform_average", **kwargs: Any) -> None:
        super().__init__(num_outputs=num_outputs, **kwargs)
        self.multioutput = inp.check_multioutput(multioutput)

    def compute(self) -> Tensor:
        return F.explained_variance_from_moments(self.residual_target_moments, self.multioutput)


class PearsonCorrCoef(Metric):
    """Pearson correlation of preds and target per output ([N] or [N, D] with D = num_outputs).

    Co-moments are merged with Chan's formula. An exactly constant column, or fewer than 2
    samples, gives NaN (as scipy.stats.pearsonr).

        >>> import torch
        >>> from torchtally import PearsonCorrCoef
        >>> PearsonCorrCoef().update(torch.tensor([1.0, 2.0, 3.0]), torch.tensor([1.0, 2.0, 2.5])).compute()
        tensor(0.9820, dtype=torch.float64)
    """

    def __init__(self, *, num_outputs: int = 1, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.num_outputs = inp.check_num_outputs(num_outputs)
        self.add_state("comoments", torch.zeros(self.num_outputs, 6, dtype=_F64), reduce="merge")

    def update(self, preds: Tensor, target: Tensor) -> None:
        F.comoments_update(self.comoments, preds, target, self.num_outputs)

    def merge_state_values(self, name: str, values: List[Tensor]) -> Tensor:
        return F.merge_moments(values, comoments=True)

    def compute(self) -> Tensor:
        return F.pearson_from_comoments(self.comoments)


class CosineSimilarity(Metric):
    """Cosine similarity of each row of [N, d] preds with the same row of target, reduced.

    ``reduction``: "sum" (default, as torchmetrics) or "mean" keep two numbers; "none" (or
    None) keeps every row's similarity (a "cat" state of 8 bytes per row) and returns them all,
    in the order seen (across ranks: rank 0's rows, then rank 1's, ...). A zero row gives NaN.
    Over no rows: "sum" gives 0, "none" an empty tensor, "mean" raises NotComputableError.

        >>> import torch
        >>> from torchtally import CosineSimilarity
        >>> m = CosineSimilarity(reduction="mean")
        >>> m.update(torch.tensor([[1.0, 0.0], [1.0, 1.0]]), torch.tensor([[1.0, 0.0], [0.0, 1.0]])).compute()
        tensor(0.8536, dtype=torch.float64)
    """

    def __init__(self, *, reduction: Optional[str] = "sum", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.reduction = F.check_cosine_reduction(reduction)
        if self.reduction in ("none", None):
            self.add_state("similarities", torch.empty(0, dtype=_F64), reduce="cat")
        else:
            self.add_state("similarity_sum", torch.tensor(0.0, dtype=_F64), reduce="sum")
            self.add_state("num_samples", torch.tensor(0, dtype=torch.int64), reduce="sum")

    def update(self, preds: Tensor, target: Tensor) -> None:
        sims = F.cosine_rows(preds, target, self.device)
        if self.reduction in ("none", None):
            self.append_state("similarities", sims)
        else:
            self.similarity_sum += sims.sum()
            self.num_samples += sims.numel()

    def compute(self) -> Tensor:
        if self.reduction in ("none", None):
            return self.similarities.clone()
        if self.reduction == "sum":
            return self.similarity_sum.clone()  # 0 over no rows
        return F.mean_of(self.similarity_sum, self.num_samples, "CosineSimilarity")
