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

from torch import Tensor

from . import update

__all__ = ["mean_squared_error"]


def mean_squared_error(preds: Tensor, target: Tensor, squared: bool = True, num_outputs: int = 1) -> Tensor:
    """Mean squared error (``squared=False``: its root). num_outputs = 1 flattens any shape;
    num_outputs = D takes [N, D] and returns one value per output.

        >>> mean_squared_error(torch.tensor([1.0, 2.0]), torch.tensor([1.0, 4.0]), squared=False)
        tensor(1.4142)
    """
    total, n = update.squared_error_sum(preds, target, update.check_num_outputs(num_outputs))
    mse = total / n
    mse = mse if squared else mse.sqrt()
    return functional_result(mse, preds, target, num_outputs)


def functional_result(value: Tensor, preds: Tensor, target: Tensor, num_outputs: int) -> Tensor:
    value = value.to(update.functional_dtype(preds, target))
    return value.reshape(()) if num_outputs == 1 else value


def moments_of(
    preds: Tensor, target: Tensor, max_dims: Optional[int]
) -> Tuple[Tensor, Tuple[int, ...], Tensor, Tensor]:
    p, t, shape = update.outputs(preds, target, max_dims)
    state = update.residual_moments_update(update.empty_moments(0, p.device), p, t)
    return state, shape, p, t
