"""FowlkesMallowsIndex: the geometric mean of pairwise precision and recall, from the shared
contingency table (torchtally.clustering.mutual_info_score)."""

from typing import Optional

from torch import Tensor

from ..functional.clustering.fowlkes_mallows_index import fmi_from_table
from .mutual_info_score import ContingencyMetric

__all__ = ["FowlkesMallowsIndex"]


class FowlkesMallowsIndex(ContingencyMetric):
    """Fowlkes-Mallows index of the clusterings ``preds`` and ``target``; pair counts as exact
    integers (torchmetrics squares them in int64).

    State: the contingency table, 24 bytes per distinct (pred, target) pair; sync: one padded
    all_gather (torchtally.clustering.mutual_info_score, also for the differences).

    >>> import torch
    >>> from torchtally.clustering import FowlkesMallowsIndex
    >>> FowlkesMallowsIndex().update(torch.tensor([2, 2, 0, 1, 0]), torch.tensor([2, 2, 1, 1, 0])).compute()
    tensor(0.5000)
    """

    higher_is_better: Optional[bool] = True
    plot_lower_bound: Optional[float] = 0.0
    plot_upper_bound: Optional[float] = 1.0

    def compute(self) -> Tensor:
        return self._result(fmi_from_table(self.contingency))
