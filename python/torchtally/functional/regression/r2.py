"""``r2_score`` (torchmetrics.functional.regression.r2's names). Coefficient of determination of
[N] or [N, D] inputs (see r2_from_moments for the edge cases."""

from torch import Tensor

from . import compute, update
from .mse import moments_of

__all__ = ["r2_score"]


def r2_score(preds: Tensor, target: Tensor, adjusted: int = 0, multioutput: str = "uniform_average") -> Tensor:
    """Coefficient of determination of [N] or [N, D] inputs (see r2_from_moments for the edge
    cases; ``adjusted`` = number of regressors for the adjusted R2).

        >>> r2_score(torch.tensor([1.0, 2.0, 3.0]), torch.tensor([1.0, 2.0, 4.0]))
        tensor(0.7857)
    """
    adjusted, multioutput = update.check_adjusted(adjusted), update.check_multioutput(multioutput)
    state, shape, p, t = moments_of(preds, target, max_dims=2)
    score = compute.r2_from_moments(state, multioutput, adjusted).to(update.functional_dtype(p, t))
    return score.reshape(shape) if multioutput == "raw_values" else score
