"""RandScore: the share of sample pairs two clusterings agree on, from the shared contingency
table (torchtally.clustering.mutual_info_score)."""

from typing import Optional

from torch import Tensor

from ..functional.clustering.rand_score import rand_from_table
from .mutual_info_score import ContingencyMetric

__all__ = ["RandScore"]


class RandScore(ContingencyMetric):
    """Rand score of the clusterings ``preds`` and ``target``; pair counts as exact integers.

    State: the contingency table, 24 bytes per distinct (pred, target) pair; sync: one padded
    all_gather (torchtally.clustering.mutual_info_score, also for the differences).

    >>> import torch
    >>> from torchtally.clustering import RandScore
    >>> RandScore().update(torch.tensor([0, 0, 1, 2]), torch.tensor([0, 0, 1, 1])).compute()
    tensor(0.8333)
    """

    higher_is_better: Optional[bool] = None
    plot_lower_bound: Optional[float] = 0.0

    def compute(self) -> Tensor:
        return self._result(rand_from_table(self.contingency))
