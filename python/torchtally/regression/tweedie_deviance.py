"""``TweedieDevianceScore`` (torchmetrics.regression.tweedie_deviance's names). Mean Tweedie
deviance of all elements for ``power``."""

from typing import Any

from torch import Tensor

from ..functional.regression import batch_sums as sums
from .log_mse import MeanOfSums

__all__ = ["TweedieDevianceScore"]


class TweedieDevianceScore(MeanOfSums):
    """Mean Tweedie deviance of all elements for ``power``: 0 squared error, 1 Poisson, 2 Gamma,
    3 inverse Gaussian, others by the general formula (0 < power < 1 is undefined: ValueError).

    Domains, checked on every batch (ValueError naming the first bad element, state unchanged):
    power < 0: preds > 0; 1 <= power < 2: preds > 0 and targets >= 0; power >= 2: both > 0.
    Differences from torchmetrics: float64 terms and sum; NaN/inf inputs, and an infinite
    ``power``, raise ValueError.

        >>> import torch
        >>> from torchtally.regression import TweedieDevianceScore
        >>> m = TweedieDevianceScore(power=2)
        >>> m.update(torch.tensor([4.0, 3.0, 2.0, 1.0]), torch.tensor([1.0, 2.0, 3.0, 4.0])).compute()
        tensor(1.2083)
    """

    higher_is_better = None
    _terms_nonnegative = False  # a deviance is >= 0, but its float sum may round below

    def __init__(self, power: float = 0.0, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.power = sums.check_power(power)
        self._add_sums(())

    def update(self, preds: Tensor, targets: Tensor) -> None:
        self._add(*sums.tweedie_deviance_sum(preds, targets, self.power, self.device))
