"""ClusterAccuracy: accuracy of a clustering under the best one-to-one matching of clusters to
classes, from a confusion matrix of int64 counts."""

from typing import TYPE_CHECKING, Any, Dict, Optional

import torch
from torch import Tensor

from ..base.metric import Metric
from ..base.state_dict import check_nonnegative
from ..functional.clustering.cluster_accuracy import (
    accuracy_from_confmat,
    check_num_classes,
    cluster_confmat,
    linear_sum_assignment,
)
from ..functional.clustering.utils import check_cluster_labels

__all__ = ["ClusterAccuracy"]


class ClusterAccuracy(Metric):
    """Clustering accuracy: the share of samples whose cluster is matched to their class, under
    the matching of clusters to classes (one to one) that makes it largest. Labels in
    [0, num_classes). The matching is scipy.optimize.linear_sum_assignment's (scipy is needed
    here, as torchmetrics needs torch_linear_assignment).

    State: confmat int64 [num_classes, num_classes] (rows: target, columns: preds), "sum":
    8 C^2 bytes, whatever the number of samples. Sync: one slot in the collection's packed
    all_reduce of int64 sums.

    Differences from torchmetrics: a label outside [0, num_classes) or a float label raises
    ValueError / TypeError naming the argument, state unchanged; NaN with no samples.

    >>> import torch
    >>> from torchtally.clustering import ClusterAccuracy
    >>> ClusterAccuracy(num_classes=3).update(torch.tensor([0, 0, 1, 2]), torch.tensor([1, 1, 2, 2])).compute()
    tensor(0.7500)
    """

    is_differentiable = False
    traceable_update = False  # the range check reads the labels
    higher_is_better: Optional[bool] = True
    full_state_update = False
    plot_lower_bound: Optional[float] = 0.0
    plot_upper_bound: Optional[float] = 1.0
    fresh_compute_results = True

    if TYPE_CHECKING:
        confmat: Tensor

    def __init__(self, num_classes: int, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        linear_sum_assignment()  # RuntimeError now, not at the first compute, without scipy
        self.num_classes = check_num_classes(num_classes)
        self.add_state("confmat", torch.zeros(num_classes, num_classes, dtype=torch.int64), reduce="sum")

    def update(self, preds: Tensor, target: Tensor) -> None:
        """preds, target: [N] integer labels in [0, num_classes)."""
        p, t = check_cluster_labels(preds, target)
        self.confmat = self.confmat + cluster_confmat(p, t, self.num_classes)

    def check_state_invariants(self, states: Dict[str, Tensor]) -> None:
        """Counts >= 0 (see Metric)."""
        super().check_state_invariants(states)
        check_nonnegative(states, "confmat")

    def compute(self) -> Tensor:
        value = accuracy_from_confmat(self.confmat)
        return torch.tensor(value, dtype=torch.float64).to(device=self.confmat.device, dtype=self.dtype)
