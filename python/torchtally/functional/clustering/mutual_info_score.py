"""``mutual_info_score`` (torchmetrics.functional.clustering.mutual_info_score's names): mutual
information (natural log) between two labellings, from their sparse contingency table."""

from torch import Tensor

from .utils import check_cluster_labels, contingency_rows, default_dtype, mutual_info_from_table, result

__all__ = ["mutual_info_score"]


def mutual_info_score(preds: Tensor, target: Tensor) -> Tensor:
    """Mutual information between two clusterings (1-D integer labels of any values), scikit-learn's
    value: 0 when either side has one cluster.

    >>> import torch
    >>> mutual_info_score(torch.tensor([1, 3, 2, 0, 1]), torch.tensor([0, 3, 2, 2, 1]))
    tensor(1.0549)
    """
    p, t = check_cluster_labels(preds, target)
    return result(mutual_info_from_table(contingency_rows(p, t)), p.device, default_dtype())
