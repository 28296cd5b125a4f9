"""``normalized_root_mean_squared_error`` (torchmetrics.functional.regression.nrmse's names). RMSE
divided by the target's mean, range, standard deviation (population) or L2 norm."""

import torch
from torch import Tensor

from ... import kernels
from . import batch_sums as sums
from . import update
from .log_mse import F64, nrmse_inputs, result

__all__ = ["normalized_root_mean_squared_error"]


def normalized_root_mean_squared_error(
    preds: Tensor, target: Tensor, normalization: str = "mean", num_outputs: int = 1
) -> Tensor:
    """RMSE divided by the target's mean, range, standard deviation (population) or L2 norm.
    ``num_outputs=1`` flattens any shape; ``num_outputs=D`` takes [N, D], one value per output.

    >>> preds, target = torch.tensor([0.0, 1.0, 2.0, 3.0]), torch.tensor([0.0, 1.0, 2.0, 2.0])
    >>> normalized_root_mean_squared_error(preds, target, normalization="range")
    tensor(0.2500)
    """
    normalization = sums.check_normalization(normalization)
    num_outputs = update.check_num_outputs(num_outputs)
    p, t = nrmse_inputs(preds, target, num_outputs)
    sse = sums.squared_error_sum(p, t)
    t64 = t.to(F64)
    n = torch.tensor(t.shape[0], device=t.device)
    if normalization == "mean":
        stat = t64.sum(0)
    elif normalization == "range":
        stat = (
            torch.stack((t64.amin(0), t64.amax(0)))
            if t.shape[0]
            else torch.full((2, num_outputs), torch.nan, dtype=F64, device=t.device)
        )
    elif normalization == "std":
        stat = update.empty_moments(num_outputs, t.device)
        kernels.moments_update(stat, update.as_float(t), None)
    else:
        stat = t64.square().sum(0)
    rmse = (sse / n).sqrt()
    return result(rmse / sums.nrmse_denominator(normalization, n, stat), p, t)
