"""``specificity``, ``binary_specificity``, ``multiclass_specificity``, ``multilabel_specificity``,
at torchmetrics' path torchmetrics.functional.classification.specificity."""

from typing import Optional

from torch import Tensor

from . import compute, update
from .stat_scores import binary_batch_stats, multiclass_batch_stats, multilabel_batch_stats
from .task_dispatch import stat_family

__all__ = ["specificity", "binary_specificity", "multiclass_specificity", "multilabel_specificity"]


def specificity(
    preds: Tensor,
    target: Tensor,
    task: str,
    threshold: float = 0.5,
    num_classes: Optional[int] = None,
    num_labels: Optional[int] = None,
    average: Optional[str] = "micro",
    multidim_average: Optional[str] = "global",
    top_k: Optional[int] = 1,
    ignore_index: Optional[int] = None,
    validate_args: bool = True,
) -> Tensor:
    return stat_family(
        (binary_specificity, multiclass_specificity, multilabel_specificity),
        preds,
        target,
        task,
        threshold,
        num_classes,
        num_labels,
        average,
        multidim_average,
        top_k,
        ignore_index,
        validate_args,
    )


def binary_specificity(
    preds: Tensor,
    target: Tensor,
    threshold: float = 0.5,
    multidim_average: str = "global",
    ignore_index: Optional[int] = None,
    validate_args: bool = True,
) -> Tensor:
    return compute.specificity(binary_batch_stats(preds, target, threshold, multidim_average, ignore_index), "micro")


def multiclass_specificity(
    preds: Tensor,
    target: Tensor,
    num_classes: int,
    average: Optional[str] = "macro",
    top_k: int = 1,
    multidim_average: str = "global",
    ignore_index: Optional[int] = None,
    validate_args: bool = True,
) -> Tensor:
    average = update.check_average(average)
    stats = multiclass_batch_stats(preds, target, num_classes, top_k, multidim_average, ignore_index)
    return compute.specificity(stats, average)


def multilabel_specificity(
    preds: Tensor,
    target: Tensor,
    num_labels: int,
    threshold: float = 0.5,
    average: Optional[str] = "macro",
    multidim_average: str = "global",
    ignore_index: Optional[int] = None,
    validate_args: bool = True,
) -> Tensor:
    average = update.check_average(average)
    stats = multilabel_batch_stats(preds, target, num_labels, threshold, multidim_average, ignore_index)
    return compute.specificity(stats, average)
