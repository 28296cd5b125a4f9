"""``explained_variance`` (torchmetrics.functional.regression.explained_variance's names).
Explained variance 1 - Var(target - preds) / Var(target) of [N] or [N, d1, ...] inputs."""

from torch import Tensor

from . import compute, update
from .mse import moments_of

__all__ = ["explained_variance"]


def explained_variance(preds: Tensor, target: Tensor, multioutput: str = "uniform_average") -> Tensor:
    """Explained variance 1 - Var(target - preds) / Var(target) of [N] or [N, d1, ...] inputs.

    >>> explained_variance(torch.tensor([1.0, 2.0, 3.0]), torch.tensor([2.0, 3.0, 4.0]))
    tensor(1.)
    """
    multioutput = update.check_multioutput(multioutput)
    state, shape, p, t = moments_of(preds, target, max_dims=None)
    score = compute.explained_variance_from_moments(state, multioutput).to(update.functional_dtype(p, t))
    return score.reshape(shape) if multioutput == "raw_values" and state.shape[0] else score
