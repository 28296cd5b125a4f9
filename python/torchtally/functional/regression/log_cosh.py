"""``log_cosh_error`` (torchmetrics.functional.regression.log_cosh's names). Mean of log(cosh(preds
- target)) of [N] inputs, or per column of [N, D] ones."""

from torch import Tensor

from . import batch_sums as sums
from . import update
from .log_mse import result

__all__ = ["log_cosh_error"]


def log_cosh_error(preds: Tensor, target: Tensor) -> Tensor:
    """Mean of log(cosh(preds - target)) of [N] inputs, or per column of [N, D] ones.

    >>> log_cosh_error(torch.tensor([[3.0, 5.0], [-2.0, 2.5]]), torch.tensor([[2.5, 5.0], [0.0, 4.0]]))
    tensor([0.7226, 0.4277])
    """
    d = preds.shape[1] if isinstance(preds, Tensor) and preds.dim() == 2 else 1
    p, t = update.pearson(preds, target, d)
    return result(sums.log_cosh_sum(p, t) / p.shape[0], p, t)
