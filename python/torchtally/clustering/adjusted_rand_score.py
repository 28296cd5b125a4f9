"""AdjustedRandScore: the Rand score adjusted for chance, from the shared contingency table
(torchtally.clustering.mutual_info_score), with pair counts as exact integers."""

from typing import Optional

from torch import Tensor

from ..functional.clustering.adjusted_rand_score import ari_from_table
from .mutual_info_score import ContingencyMetric

__all__ = ["AdjustedRandScore"]


class AdjustedRandScore(ContingencyMetric):
    """Adjusted Rand score of the clusterings ``preds`` and ``target``.

    State: the contingency table, 24 bytes per distinct (pred, target) pair; sync: one padded
    all_gather (torchtally.clustering.mutual_info_score).

    Differences from torchmetrics: scikit-learn's value at any number of samples. The pair
    counts are products of up to N^2 and their products overflow int64 from about 80,000 samples
    on; torchmetrics 1.9 multiplies them in int64 and gives e.g. -208.4 for one million random
    binary labels, where the value is about 0. Here the products are Python integers (exact).
    See also torchtally.clustering.mutual_info_score.

    >>> import torch
    >>> from torchtally.clustering import AdjustedRandScore
    >>> AdjustedRandScore().update(torch.tensor([0, 0, 1, 2]), torch.tensor([0, 0, 1, 1])).compute()
    tensor(0.5714)
    """

    higher_is_better: Optional[bool] = None
    plot_lower_bound: Optional[float] = -0.5
    plot_upper_bound: Optional[float] = 1.0

    def compute(self) -> Tensor:
        return self._result(ari_from_table(self.contingency))
