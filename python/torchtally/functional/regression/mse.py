"""Regression metrics: the functional forms (one batch in, the metric out).

States and their per-batch update: update.py; results from the states: compute.py.

Results follow torchmetrics: NaN for a mean over no samples, a ValueError for R2 over fewer
than 2. Functional forms return the inputs' promoted float dtype (torch's default dtype for
integer inputs), as torchmetrics' do. Results carry no gradient.

    >>> import torch
    >>> from torchtally.functional import mean_squared_error, r2_score
    >>> preds, target = torch.tensor([2.5, 0.0, 2.0, 8.0]), torch.tensor([3.0, -0.5, 2.0, 7.0])
    >>> mean_squared_error(preds, target)
    tensor(0.3750)
    >>> r2_score(preds, target)
    tensor(0.9486)
"""

from typing import Optional, Tuple

import torch
from torch import Tensor

from . import compute, update

__all__ = [
    "concordance_corrcoef",
    "cosine_similarity",
    "explained_variance",
    "mean_absolute_error",
    "mean_absolute_percentage_error",
    "mean_squared_error",
    "pearson_corrcoef",
    "r2_score",
]


def mean_squared_error(preds: Tensor, target: Tensor, squared: bool = True, num_outputs: int = 1) -> Tensor:
    """Mean squared error (``squared=False``: its root). num_outputs = 1 flattens any shape;
    num_outputs = D takes [N, D] and returns one value per output.

        >>> mean_squared_error(torch.tensor([1.0, 2.0]), torch.tensor([1.0, 4.0]), squared=False)
        tensor(1.4142)
    """
    total, n = update.squared_error_sum(preds, target, update.check_num_outputs(num_outputs))
    mse = total / n
    mse = mse if squared else mse.sqrt()
    return _functional_result(mse, preds, target, num_outputs)


def mean_absolute_error(preds: Tensor, target: Tensor, num_outputs: int = 1) -> Tensor:
    """Mean absolute error (shapes as mean_squared_error).

    >>> mean_absolute_error(torch.tensor([1.0, 2.0]), torch.tensor([1.5, 4.0]))
    tensor(1.2500)
    """
    total, n = update.absolute_error_sum(preds, target, update.check_num_outputs(num_outputs))
    return _functional_result(total / n, preds, target, num_outputs)


def _functional_result(value: Tensor, preds: Tensor, target: Tensor, num_outputs: int) -> Tensor:
    value = value.to(update.functional_dtype(preds, target))
    return value.reshape(()) if num_outputs == 1 else value


def mean_absolute_percentage_error(preds: Tensor, target: Tensor) -> Tensor:
    """Mean of ``|target - preds| / max(|target|, 1.17e-6)`` over all elements (a fraction, not %).

    >>> mean_absolute_percentage_error(torch.tensor([1.0, 3.0]), torch.tensor([2.0, 4.0]))
    tensor(0.3750)
    """
    total, n = update.absolute_percentage_error_sum(preds, target)
    return (total / n).to(update.functional_dtype(preds, target))


def _moments_of(
    preds: Tensor, target: Tensor, max_dims: Optional[int]
) -> Tuple[Tensor, Tuple[int, ...], Tensor, Tensor]:
    p, t, shape = update.outputs(preds, target, max_dims)
    state = update.residual_moments_update(update.empty_moments(0, p.device), p, t)
    return state, shape, p, t


def r2_score(preds: Tensor, target: Tensor, adjusted: int = 0, multioutput: str = "uniform_average") -> Tensor:
    """Coefficient of determination of [N] or [N, D] inputs (see r2_from_moments for the edge
    cases; ``adjusted`` = number of regressors for the adjusted R2).

        >>> r2_score(torch.tensor([1.0, 2.0, 3.0]), torch.tensor([1.0, 2.0, 4.0]))
        tensor(0.7857)
    """
    adjusted, multioutput = update.check_adjusted(adjusted), update.check_multioutput(multioutput)
    state, shape, p, t = _moments_of(preds, target, max_dims=2)
    score = compute.r2_from_moments(state, multioutput, adjusted).to(update.functional_dtype(p, t))
    return score.reshape(shape) if multioutput == "raw_values" else score


def explained_variance(preds: Tensor, target: Tensor, multioutput: str = "uniform_average") -> Tensor:
    """Explained variance 1 - Var(target - preds) / Var(target) of [N] or [N, d1, ...] inputs.

    >>> explained_variance(torch.tensor([1.0, 2.0, 3.0]), torch.tensor([2.0, 3.0, 4.0]))
    tensor(1.)
    """
    multioutput = update.check_multioutput(multioutput)
    state, shape, p, t = _moments_of(preds, target, max_dims=None)
    score = compute.explained_variance_from_moments(state, multioutput).to(update.functional_dtype(p, t))
    return score.reshape(shape) if multioutput == "raw_values" and state.shape[0] else score


def pearson_corrcoef(preds: Tensor, target: Tensor) -> Tensor:
    """Pearson correlation per column of [N] or [N, D] inputs (NaN for a constant column).

    >>> pearson_corrcoef(torch.tensor([1.0, 2.0, 3.0]), torch.tensor([1.0, 2.0, 2.5]))
    tensor(0.9820)
    """
    d = preds.shape[1] if isinstance(preds, Tensor) and preds.dim() == 2 else 1
    p, t = update.pearson(preds, target, d)
    state = torch.zeros(d, 6, dtype=torch.float64, device=p.device)
    update.comoments_update(state, p, t)
    # torchmetrics' dtype: preds' for 1-D inputs, the promoted one for [N, D].
    dtype = update.functional_dtype(p, p) if preds.dim() == 1 else update.functional_dtype(p, t)
    return compute.as_result(compute.pearson_from_comoments(state), dtype)


def concordance_corrcoef(preds: Tensor, target: Tensor) -> Tensor:
    """Lin's concordance correlation per column of [N] or [N, D] inputs: always [D] ([1] for
    1-D inputs, as torchmetrics); NaN for a constant column. Computed from the co-moments
    Pearson keeps (float64, Chan-merged).

    >>> concordance_corrcoef(torch.tensor([2.5, 0.0, 2.0, 8.0]), torch.tensor([3.0, -0.5, 2.0, 7.0]))
    tensor([0.9777])
    """
    d = preds.shape[1] if isinstance(preds, Tensor) and preds.dim() == 2 else 1
    p, t = update.pearson(preds, target, d)
    state = torch.zeros(d, 6, dtype=torch.float64, device=p.device)
    update.comoments_update(state, p, t)
    dtype = update.functional_dtype(p, p) if preds.dim() == 1 else update.functional_dtype(p, t)
    return compute.concordance_from_comoments(state).to(dtype)


def cosine_similarity(preds: Tensor, target: Tensor, reduction: Optional[str] = "sum") -> Tensor:
    """Cosine similarity of each row of [N, d] preds with the same row of target, reduced by
    ``reduction``: "sum" (default, as torchmetrics), "mean", or "none"/None (one value per
    row). float32, as torchmetrics.

        >>> cosine_similarity(torch.tensor([[1.0, 0.0], [1.0, 1.0]]), torch.tensor([[1.0, 0.0], [0.0, 1.0]]))
        tensor(1.7071)
    """
    reduction = update.check_cosine_reduction(reduction)
    sims = update.cosine_rows(preds, target)
    if reduction == "sum":
        sims = sims.sum()
    elif reduction == "mean":
        sims = sims.mean()
    return sims.to(torch.float32)
