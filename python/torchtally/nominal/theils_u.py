"""``TheilsU`` (torchmetrics.nominal.theils_u's name)."""

from torch import Tensor

from ..functional.nominal import utils
from .base import ContingencyTableState

__all__ = ["TheilsU"]


class TheilsU(ContingencyTableState):
    """Theil's uncertainty coefficient U(preds | target) = (H(preds) - H(preds | target)) /
    H(preds): the share of the entropy of preds that target explains. Asymmetric, in [0, 1];
    0 where preds is constant. preds, target: [N] categories in [0, num_classes) or [N, C]
    scores (argmax).

    State: one int64 [num_classes, num_classes] table (8 C^2 bytes, whatever the number of
    samples); a sync is one all_reduce of it (packed with a collection's other fixed states).

    Differences from torchmetrics: the table is int64 and the entropies float64; a constant
    preds gives a float 0 (torchmetrics: int64 0); labels outside [0, num_classes), float labels
    that are not whole numbers, NaN scores and preds and target of different lengths raise
    ValueError with the state unchanged.

        >>> import torch
        >>> from torchtally.nominal import TheilsU
        >>> preds = torch.tensor([0, 1, 2, 2, 1, 0])
        >>> target = torch.tensor([0, 1, 2, 2, 0, 0])
        >>> TheilsU(num_classes=3).update(preds, target).compute()
        tensor(0.7103)
    """

    def compute(self) -> Tensor:
        return utils.as_result(utils.theils_u_of(self.confmat), self.dtype)
