"""``TschuprowsT`` (torchmetrics.nominal.tschuprows' name)."""

from typing import Any

from torch import Tensor

from ..functional.nominal import utils
from .base import ContingencyTableState

__all__ = ["TschuprowsT"]


class TschuprowsT(ContingencyTableState):
    """Tschuprow's T association of two nominal series, sqrt(phi^2 / sqrt((r - 1)(c - 1))) with
    phi^2 = chi^2 / n over the categories that occur; with ``bias_correction`` (the default),
    Bergsma's correction, and Yates' continuity correction on a 2 x 2 table. Symmetric, in
    [0, 1]. preds, target: [N] categories in [0, num_classes) or [N, C] scores (argmax).

    State: one int64 [num_classes, num_classes] table (8 C^2 bytes, whatever the number of
    samples); a sync is one all_reduce of it (packed with a collection's other fixed states).

    Differences from torchmetrics: the table is int64 (exact counts); Yates' correction moves a
    cell by at most its distance to the expected count, as scipy.stats.chi2_contingency (by 0.5
    always in torchmetrics, which overshoots when a 2 x 2 table is within 0.5 of independence);
    NaN comes with a warning wherever the value is undefined; labels outside
    [0, num_classes), float labels that are not whole numbers, NaN scores and preds and target
    of different lengths raise ValueError with the state unchanged.

        >>> import torch
        >>> from torchtally.nominal import TschuprowsT
        >>> preds = torch.tensor([0, 1, 2, 2, 1, 0, 2, 1])
        >>> target = torch.tensor([0, 1, 2, 2, 0, 0, 2, 1])
        >>> TschuprowsT(num_classes=3).update(preds, target).compute()
        tensor(0.7817)
    """

    def __init__(
        self,
        num_classes: int,
        bias_correction: bool = True,
        nan_strategy: str = "replace",
        nan_replace_value: Any = 0.0,
        **kwargs: Any,
    ) -> None:
        super().__init__(num_classes, nan_strategy, nan_replace_value, **kwargs)
        self.bias_correction = utils.check_flag("bias_correction", bias_correction)

    def compute(self) -> Tensor:
        return utils.as_result(utils.tschuprows_t_of(self.confmat, self.bias_correction), self.dtype)
