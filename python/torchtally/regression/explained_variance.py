"""``ExplainedVariance`` (torchmetrics.regression.explained_variance's names). Explained variance,
1 - Var(target - preds) / Var(target), per output then averaged."""

from typing import Any

from torch import Tensor

from ..functional.regression import compute as reg_compute
from ..functional.regression import update as reg_update
from .mse import ResidualMoments

__all__ = ["ExplainedVariance"]


class ExplainedVariance(ResidualMoments):
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
