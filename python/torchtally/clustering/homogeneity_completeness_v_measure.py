"""HomogeneityScore, CompletenessScore and VMeasureScore, from the shared contingency table
(torchtally.clustering.mutual_info_score)."""

from typing import Any, Optional

from torch import Tensor

from ..functional.clustering.homogeneity_completeness_v_measure import check_beta, hcv_from_table
from .mutual_info_score import ContingencyMetric

__all__ = ["HomogeneityScore", "CompletenessScore", "VMeasureScore"]


class _HCVMetric(ContingencyMetric):
    higher_is_better: Optional[bool] = True
    plot_lower_bound: Optional[float] = 0.0
    plot_upper_bound: Optional[float] = 1.0


class HomogeneityScore(_HCVMetric):
    """Homogeneity of the clustering ``preds`` against the classes ``target``: 1 when every
    cluster holds one class only.

    State: the contingency table, 24 bytes per distinct (pred, target) pair; sync: one padded
    all_gather (torchtally.clustering.mutual_info_score).

    Differences from torchmetrics: with no samples, 1 (scikit-learn's; torchmetrics' functional
    form gives 0); see also torchtally.clustering.mutual_info_score.

    >>> import torch
    >>> from torchtally.clustering import HomogeneityScore
    >>> HomogeneityScore().update(torch.tensor([0, 0, 1, 1, 2, 2]), torch.tensor([0, 0, 0, 1, 1, 1])).compute()
    tensor(0.6667)
    """

    def compute(self) -> Tensor:
        return self._result(hcv_from_table(self.contingency)[0])


class CompletenessScore(_HCVMetric):
    """Completeness of the clustering ``preds`` against the classes ``target``: 1 when every
    class sits in one cluster.

    State: the contingency table, 24 bytes per distinct (pred, target) pair; sync: one padded
    all_gather (torchtally.clustering.mutual_info_score).

    Differences from torchmetrics: as HomogeneityScore's.

    >>> import torch
    >>> from torchtally.clustering import CompletenessScore
    >>> CompletenessScore().update(torch.tensor([0, 0, 1, 1, 2, 2]), torch.tensor([0, 0, 0, 1, 1, 1])).compute()
    tensor(0.4206)
    """

    def compute(self) -> Tensor:
        return self._result(hcv_from_table(self.contingency)[1])


class VMeasureScore(_HCVMetric):
    """V-measure of the clustering ``preds`` against the classes ``target``:
    ``(1 + beta) h c / (beta h + c)`` of homogeneity h and completeness c.

    State: the contingency table, 24 bytes per distinct (pred, target) pair; sync: one padded
    all_gather (torchtally.clustering.mutual_info_score).

    Differences from torchmetrics: 0 when homogeneity and completeness are both 0
    (scikit-learn's; torchmetrics gives 1); 1 with no samples; ``beta`` may be an int; see also
    torchtally.clustering.mutual_info_score.

    >>> import torch
    >>> from torchtally.clustering import VMeasureScore
    >>> VMeasureScore(beta=2.0).update(torch.tensor([0, 0, 1, 1, 2, 2]), torch.tensor([0, 0, 0, 1, 1, 1])).compute()
    tensor(0.4796)
    """

    def __init__(self, beta: float = 1.0, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.beta = check_beta(beta)

    def compute(self) -> Tensor:
        return self._result(hcv_from_table(self.contingency, self.beta)[2])
