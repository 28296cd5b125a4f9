"""``normalized_mutual_info_score`` (torchmetrics.functional.clustering.normalized_mutual_info_score's
names): mutual information divided by a mean of the two labellings' entropies."""

from torch import Tensor

from .utils import (
    check_average_method,
    check_cluster_labels,
    contingency_rows,
    default_dtype,
    generalized_mean,
    information,
    result,
)

__all__ = ["normalized_mutual_info_score", "nmi_from_table"]


def nmi_from_table(table: Tensor, average_method: str) -> float:
    """scikit-learn's normalized_mutual_info_score of a contingency table: 1 when both sides have
    one cluster (or no samples), 0 when the mutual information is 0."""
    mi, h_preds, h_target, pred_clusters, target_clusters = information(table)
    if pred_clusters == target_clusters and pred_clusters <= 1:
        return 1.0
    if mi == 0.0:
        return 0.0
    return mi / generalized_mean(h_target, h_preds, average_method)


def normalized_mutual_info_score(preds: Tensor, target: Tensor, average_method: str = "arithmetic") -> Tensor:
    """Normalized mutual information of two clusterings; ``average_method`` ("min", "geometric",
    "arithmetic", "max") picks the mean of the entropies it divides by. scikit-learn's value
    (torchmetrics gives 0 where both sides have a single cluster: here 1, a perfect match).

    >>> import torch
    >>> normalized_mutual_info_score(torch.tensor([1, 3, 2, 0, 1]), torch.tensor([0, 3, 2, 2, 1]))
    tensor(0.7919)
    """
    check_average_method(average_method)
    p, t = check_cluster_labels(preds, target)
    return result(nmi_from_table(contingency_rows(p, t), average_method), p.device, default_dtype())
