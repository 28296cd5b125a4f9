"""``adjusted_rand_score`` (torchmetrics.functional.clustering.adjusted_rand_score's names): the
Rand score adjusted for chance. The pair counts are Python ints, so their products are exact at
any number of samples (torchmetrics 1.9 multiplies them in int64, which overflows from about
80,000 samples on: -208.4 for one million random binary labels where the value is about 0)."""

from torch import Tensor

from .utils import check_cluster_labels, contingency_rows, default_dtype, pair_confusion, result

__all__ = ["adjusted_rand_score", "ari_from_table"]


def ari_from_table(table: Tensor) -> float:
    """scikit-learn's adjusted_rand_score of a contingency table (1 when no pair disagrees)."""
    tn, fp, fn, tp = pair_confusion(table)
    if fn == 0 and fp == 0:
        return 1.0
    return 2.0 * (tp * tn - fn * fp) / ((tp + fn) * (fn + tn) + (tp + fp) * (fp + tn))


def adjusted_rand_score(preds: Tensor, target: Tensor) -> Tensor:
    """Adjusted Rand score of two clusterings (1-D integer labels of any values), scikit-learn's
    value at any size.

    >>> import torch
    >>> adjusted_rand_score(torch.tensor([0, 0, 1, 2]), torch.tensor([0, 0, 1, 1]))
    tensor(0.5714)
    """
    p, t = check_cluster_labels(preds, target)
    return result(ari_from_table(contingency_rows(p, t)), p.device, default_dtype())
