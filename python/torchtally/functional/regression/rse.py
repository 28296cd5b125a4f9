"""``relative_squared_error`` (torchmetrics.functional.regression.rse's names). Sum of squared
errors over the target's sum of squared deviations from its mean, per column of [N] or [N, D]
inputs, then averaged."""

from torch import Tensor

from ... import kernels
from . import batch_sums as sums
from . import update
from .log_mse import result

__all__ = ["relative_squared_error"]


def relative_squared_error(preds: Tensor, target: Tensor, squared: bool = True) -> Tensor:
    """Sum of squared errors over the target's sum of squared deviations from its mean, per
    column of [N] or [N, D] inputs, then averaged; ``squared=False``: its root (RRSE).

    >>> relative_squared_error(torch.tensor([2.5, 0.0, 2.0, 8.0]), torch.tensor([3.0, -0.5, 2.0, 7.0]))
    tensor(0.0514)
    """
    squared = update.check_squared(squared)
    p, t, _ = update.outputs(preds, target, max_dims=2)
    sse = sums.squared_error_sum(p, t)
    moments = update.empty_moments(p.shape[1], p.device)
    kernels.moments_update(moments, update.as_float(t), None)
    dtype = update.functional_dtype(p, t)
    return result(sums.rse_from(sse, moments, squared, dtype), p, t)
