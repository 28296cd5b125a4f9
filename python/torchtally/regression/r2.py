"""``R2Score`` (torchmetrics.regression.r2's names). Coefficient of determination, 1 - SS_res /
SS_tot, per output then averaged."""

from typing import Any

from torch import Tensor

from ..functional.regression import compute as reg_compute
from ..functional.regression import update as reg_update
from .mse import ResidualMoments

__all__ = ["R2Score"]


class R2Score(ResidualMoments):
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
