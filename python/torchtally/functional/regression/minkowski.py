"""``minkowski_distance`` (torchmetrics.functional.regression.minkowski's names). ``(sum of |preds
- targets|^p)^(1/p)`` over all elements, for ``p >= 1``."""

from torch import Tensor

from . import batch_sums as sums
from .log_mse import result

__all__ = ["minkowski_distance"]


def minkowski_distance(preds: Tensor, targets: Tensor, p: float) -> Tensor:
    """``(sum of |preds - targets|^p)^(1/p)`` over all elements, for ``p >= 1``.

    >>> minkowski_distance(torch.tensor([1.0, 2.0, 3.0]), torch.tensor([2.0, 4.0, 3.0]), p=3)
    tensor(2.0801)
    """
    p = sums.check_minkowski_p(p)
    return result(sums.minkowski_sum(preds, targets, p).pow(1.0 / p), preds, targets)
