"""``PearsonsContingencyCoefficient`` (torchmetrics.nominal.pearson's name)."""

from torch import Tensor

from ..functional.nominal import utils
from .base import ContingencyTableState

__all__ = ["PearsonsContingencyCoefficient"]


class PearsonsContingencyCoefficient(ContingencyTableState):
    """Pearson's contingency coefficient of two nominal series, sqrt(phi^2 / (1 + phi^2)) with
    phi^2 = chi^2 / n over the categories that occur. Symmetric, in [0, 1). preds, target: [N]
    categories in [0, num_classes) or [N, C] scores (argmax).

    State: one int64 [num_classes, num_classes] table (8 C^2 bytes, whatever the number of
    samples); a sync is one all_reduce of it (packed with a collection's other fixed states).

    Differences from torchmetrics: the table is int64 (exact counts); NaN comes with a warning
    when there is no sample; labels outside [0, num_classes), float labels that are not whole
    numbers, NaN scores and preds and target of different lengths raise ValueError with the
    state unchanged.

        >>> import torch
        >>> from torchtally.nominal import PearsonsContingencyCoefficient
        >>> preds = torch.tensor([0, 1, 2, 2, 1, 0])
        >>> target = torch.tensor([0, 1, 2, 2, 0, 0])
        >>> PearsonsContingencyCoefficient(num_classes=3).update(preds, target).compute()
        tensor(0.7559)
    """

    def compute(self) -> Tensor:
        return utils.as_result(utils.pearsons_contingency_of(self.confmat), self.dtype)
