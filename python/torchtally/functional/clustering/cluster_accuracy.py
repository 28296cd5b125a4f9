"""``cluster_accuracy`` (torchmetrics.functional.clustering.cluster_accuracy's names): accuracy of a
clustering under the best one-to-one matching of clusters to classes (the Hungarian method on
the confusion matrix; scipy.optimize.linear_sum_assignment solves it)."""

from typing import Any

import torch
from torch import Tensor

from .utils import I64, check_cluster_labels, default_dtype

__all__ = ["cluster_accuracy", "check_num_classes", "cluster_confmat", "accuracy_from_confmat"]


def check_num_classes(num_classes: Any) -> int:
    if isinstance(num_classes, bool) or not isinstance(num_classes, int) or num_classes <= 0:
        raise ValueError(f"num_classes: expected a positive integer, got {num_classes!r}")
    return num_classes


def linear_sum_assignment() -> Any:
    """scipy's solver, or RuntimeError naming what to install (scipy is not a dependency of
    torchtally's core; torchmetrics needs torch_linear_assignment here)."""
    try:
        from scipy.optimize import linear_sum_assignment as solve  # type: ignore[import-untyped]
    except ImportError as error:  # pragma: no cover - scipy comes with the test extras
        raise RuntimeError("ClusterAccuracy needs scipy (pip install scipy) for the assignment") from error
    return solve


def cluster_confmat(preds: Tensor, target: Tensor, num_classes: int) -> Tensor:
    """The [C, C] int64 confusion matrix (rows: target, columns: preds) of checked labels in
    [0, C); ValueError naming the argument for a label outside."""
    for name, x in (("preds", preds), ("target", target)):
        if x.numel() and (bool((x < 0).any()) or bool((x >= num_classes).any())):
            raise ValueError(
                f"{name}: expected labels in [0, {num_classes}), got values from {int(x.min())} to {int(x.max())}"
            )
    flat = target * num_classes + preds
    return torch.bincount(flat, minlength=num_classes * num_classes).to(I64).reshape(num_classes, num_classes)


def accuracy_from_confmat(confmat: Tensor) -> float:
    """The matched share: the largest sum of C entries, one per row and column, over the total
    (NaN with no samples)."""
    total = int(confmat.sum())
    if total == 0:
        return float("nan")
    counts = confmat.detach().cpu().numpy()
    rows, cols = linear_sum_assignment()(counts, maximize=True)
    return int(counts[rows, cols].sum()) / total


def cluster_accuracy(preds: Tensor, target: Tensor, num_classes: int) -> Tensor:
    """Clustering accuracy of ``preds`` against ``target``, labels in [0, num_classes).

    >>> import torch
    >>> cluster_accuracy(torch.tensor([0, 0, 1, 1]), torch.tensor([1, 1, 0, 0]), num_classes=2)
    tensor(1.)
    """
    num_classes = check_num_classes(num_classes)
    p, t = check_cluster_labels(preds, target)
    value = accuracy_from_confmat(cluster_confmat(p, t, num_classes))
    return torch.tensor(value, dtype=torch.float64).to(device=p.device, dtype=default_dtype())
