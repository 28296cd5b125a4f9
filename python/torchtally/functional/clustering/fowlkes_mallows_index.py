"""``fowlkes_mallows_index`` (torchmetrics.functional.clustering.fowlkes_mallows_index's names):
the geometric mean of pairwise precision and recall of two labellings."""

import math

from torch import Tensor

from .utils import check_cluster_labels, contingency_rows, default_dtype, pair_sums, result

__all__ = ["fowlkes_mallows_index", "fmi_from_table"]


def fmi_from_table(table: Tensor) -> float:
    """scikit-learn's fowlkes_mallows_score of a contingency table (0 when no pair is together
    in both); pair counts as Python ints."""
    n, squares, pred_squares, target_squares = pair_sums(table)
    tk = squares - n
    if tk == 0:
        return 0.0
    pk = pred_squares - n
    qk = target_squares - n
    return math.sqrt(tk / pk) * math.sqrt(tk / qk)


def fowlkes_mallows_index(preds: Tensor, target: Tensor) -> Tensor:
    """Fowlkes-Mallows index of two clusterings (1-D integer labels of any values).

    >>> import torch
    >>> fowlkes_mallows_index(torch.tensor([2, 2, 0, 1, 0]), torch.tensor([2, 2, 1, 1, 0]))
    tensor(0.5000)
    """
    p, t = check_cluster_labels(preds, target)
    return result(fmi_from_table(contingency_rows(p, t)), p.device, default_dtype())
