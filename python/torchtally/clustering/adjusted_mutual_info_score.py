"""AdjustedMutualInfoScore: mutual information adjusted for chance, from the shared contingency
table (torchtally.clustering.mutual_info_score); the expected mutual information comes from the
table's margins, as scikit-learn computes it."""

from typing import Any, Optional

from torch import Tensor

from ..functional.clustering.adjusted_mutual_info_score import ami_from_table
from ..functional.clustering.utils import check_average_method
from .mutual_info_score import MutualInfoScore

__all__ = ["AdjustedMutualInfoScore"]


class AdjustedMutualInfoScore(MutualInfoScore):
    """Adjusted mutual information of the clusterings ``preds`` and ``target``:
    ``(MI - E[MI]) / (mean(H(preds), H(target)) - E[MI])``, ``average_method`` as
    NormalizedMutualInfoScore's. E[MI] takes time in the number of cluster pairs times their
    sizes (as scikit-learn's), once per compute.

    State: the contingency table, 24 bytes per distinct (pred, target) pair; sync: one padded
    all_gather (torchtally.clustering.mutual_info_score).

    Differences from torchmetrics: scikit-learn's special cases (1 when both sides have a
    single cluster, torchmetrics 0; 0 when one side has; the numerator kept eps away from 0 as
    the denominator); see also torchtally.clustering.mutual_info_score.

    >>> import torch
    >>> from torchtally.clustering import AdjustedMutualInfoScore
    >>> metric = AdjustedMutualInfoScore("arithmetic")
    >>> metric.update(torch.tensor([2, 1, 0, 1, 0]), torch.tensor([0, 2, 1, 1, 0])).compute()
    tensor(-0.2500)
    """

    higher_is_better: Optional[bool] = None
    plot_lower_bound: Optional[float] = 0.0
    plot_upper_bound: Optional[float] = 1.0

    def __init__(self, average_method: str = "arithmetic", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.average_method = check_average_method(average_method)

    def compute(self) -> Tensor:
        return self._result(ami_from_table(self.contingency, self.average_method))
