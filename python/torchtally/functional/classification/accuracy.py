"""``accuracy``, ``binary_accuracy``, ``multiclass_accuracy``, ``multilabel_accuracy``, at
torchmetrics' path torchmetrics.functional.classification.accuracy."""

from typing import Optional

from torch import Tensor

from ..tasks import check_task, check_task_count
from . import compute, update
from .stat_scores import binary_batch_stats, multiclass_batch_stats, multilabel_batch_stats
from .task_dispatch import check_multiclass_counts

__all__ = ["accuracy", "binary_accuracy", "multiclass_accuracy", "multilabel_accuracy"]


def accuracy(
    preds: Tensor,
    target: Tensor,
    task: str,
    threshold: float = 0.5,
    num_classes: Optional[int] = None,
    num_labels: Optional[int] = None,
    average: Optional[str] = "micro",
    multidim_average: str = "global",
    top_k: Optional[int] = 1,
    ignore_index: Optional[int] = None,
    validate_args: bool = True,
) -> Tensor:
    task = check_task(task)
    if task == "binary":
        return binary_accuracy(preds, target, threshold, multidim_average, ignore_index, validate_args)
    if task == "multiclass":
        check_multiclass_counts(num_classes, top_k, task)
        return multiclass_accuracy(
            preds, target, num_classes, average, top_k, multidim_average, ignore_index, validate_args
        )
    check_task_count("num_labels", num_labels, task)
    return multilabel_accuracy(
        preds, target, num_labels, threshold, average, multidim_average, ignore_index, validate_args
    )


def binary_accuracy(
    preds: Tensor,
    target: Tensor,
    threshold: float = 0.5,
    multidim_average: str = "global",
    ignore_index: Optional[int] = None,
    validate_args: bool = True,
) -> Tensor:
    return compute.accuracy(binary_batch_stats(preds, target, threshold, multidim_average, ignore_index), "micro")


def multiclass_accuracy(
    preds: Tensor,
    target: Tensor,
    num_classes: Optional[int] = None,
    average: Optional[str] = "macro",
    top_k: int = 1,
    multidim_average: str = "global",
    ignore_index: Optional[int] = None,
    validate_args: bool = True,
) -> Tensor:
    average = update.check_average(average)
    stats = multiclass_batch_stats(preds, target, num_classes, top_k, multidim_average, ignore_index)
    return compute.accuracy(stats, average)


def multilabel_accuracy(
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
    return compute.accuracy(stats, average)
