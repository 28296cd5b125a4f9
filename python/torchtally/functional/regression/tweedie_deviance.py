"""``tweedie_deviance_score`` (torchmetrics.functional.regression.tweedie_deviance's names). Mean
Tweedie deviance for ``power`` (0."""

from torch import Tensor

from . import batch_sums as sums
from .log_mse import result

__all__ = ["tweedie_deviance_score"]


def tweedie_deviance_score(preds: Tensor, targets: Tensor, power: float = 0.0) -> Tensor:
    """Mean Tweedie deviance for ``power`` (0: squared error, 1: Poisson, 2: Gamma, ...;
    0 < power < 1 is undefined). Domains: power < 0: preds > 0; 1 <= power < 2: preds > 0,
    targets >= 0; power >= 2: both > 0.

    >>> tweedie_deviance_score(torch.tensor([4.0, 3.0, 2.0, 1.0]), torch.tensor([1.0, 2.0, 3.0, 4.0]), power=2)
    tensor(1.2083)
    """
    power = sums.check_power(power)
    total, n = sums.tweedie_deviance_sum(preds, targets, power)
    return result(total / n, preds, targets)
