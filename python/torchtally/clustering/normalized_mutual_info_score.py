"""NormalizedMutualInfoScore: mutual information over a mean of the labellings' entropies, from
the shared contingency table (torchtally.clustering.mutual_info_score)."""

from typing import Any, Optional

from torch import Tensor

from ..functional.clustering.normalized_mutual_info_score import nmi_from_table
from ..functional.clustering.utils import check_average_method
from .mutual_info_score import MutualInfoScore

__all__ = ["NormalizedMutualInfoScore"]


class NormalizedMutualInfoScore(MutualInfoScore):
    """Normalized mutual information of the clusterings ``preds`` and ``target``;
    ``average_method`` ("min", "geometric", "arithmetic", "max") picks the mean of the two
    entropies it divides by.

    State: the contingency table, 24 bytes per distinct (pred, target) pair; sync: one padded
    all_gather (torchtally.clustering.mutual_info_score).

    Differences from torchmetrics: scikit-learn's value where both sides have a single cluster
    (1, a perfect match; torchmetrics gives 0), and 0 exactly when the mutual information is 0
    (torchmetrics: when it is within float32's eps of 0); see also the module docstring of
    torchtally.clustering.mutual_info_score.

    >>> import torch
    >>> from torchtally.clustering import NormalizedMutualInfoScore
    >>> metric = NormalizedMutualInfoScore("arithmetic")
    >>> metric.update(torch.tensor([1, 3, 2, 0, 1]), torch.tensor([0, 3, 2, 2, 1])).compute()
    tensor(0.7919)
    """

    higher_is_better: Optional[bool] = None
    plot_lower_bound: Optional[float] = 0.0
    plot_upper_bound: Optional[float] = 1.0

    def __init__(self, average_method: str = "arithmetic", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.average_method = check_average_method(average_method)

    def compute(self) -> Tensor:
        return self._result(nmi_from_table(self.contingency, self.average_method))
