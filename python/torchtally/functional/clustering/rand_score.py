"""``rand_score`` (torchmetrics.functional.clustering.rand_score's names): the share of sample
pairs on which two labellings agree (together in both, or apart in both)."""

from torch import Tensor

from .utils import check_cluster_labels, contingency_rows, default_dtype, pair_confusion, result

__all__ = ["rand_score", "rand_from_table"]


def rand_from_table(table: Tensor) -> float:
    """scikit-learn's rand_score of a contingency table (1 with fewer than 2 samples, or when
    every pair agrees); pair counts as Python ints."""
    tn, fp, fn, tp = pair_confusion(table)
    agree, total = tn + tp, tn + fp + fn + tp
    if agree == total or total == 0:
        return 1.0
    return agree / total


def rand_score(preds: Tensor, target: Tensor) -> Tensor:
    """Rand score of two clusterings (1-D integer labels of any values).

    >>> import torch
    >>> rand_score(torch.tensor([0, 0, 1, 2]), torch.tensor([0, 0, 1, 1]))
    tensor(0.8333)
    """
    p, t = check_cluster_labels(preds, target)
    return result(rand_from_table(contingency_rows(p, t)), p.device, default_dtype())
