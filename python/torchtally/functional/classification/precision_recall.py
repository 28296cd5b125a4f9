"""``precision``, ``recall``, ``binary_precision``, ``multiclass_precision``,
``multilabel_precision``, ``binary_recall``, ``multiclass_recall``, ``multilabel_recall``, at
torchmetrics' path torchmetrics.functional.classification.precision_recall."""

from typing import Optional

from torch import Tensor

from . import compute, update
from .stat_scores import binary_batch_stats, multiclass_batch_stats, multilabel_batch_stats
from .task_dispatch import precision_or_recall

__all__ = [
    "precision",
    "recall",
    "binary_precision",
    "multiclass_precision",
    "multilabel_precision",
    "binary_recall",
    "multiclass_recall",
    "multilabel_recall",
]


def precision(
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
    zero_division: float = 0,
) -> Tensor:
    return precision_or_recall(
        (binary_precision, multiclass_precision, multilabel_precision),
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
        zero_division,
    )


def recall(
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
    zero_division: float = 0,
) -> Tensor:
    return precision_or_recall(
        (binary_recall, multiclass_recall, multilabel_recall),
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
        zero_division,
    )


def binary_precision(
    preds: Tensor,
    target: Tensor,
    threshold: float = 0.5,
    multidim_average: str = "global",
    ignore_index: Optional[int] = None,
    validate_args: bool = True,
    zero_division: float = 0,
) -> Tensor:
    zero_division = update.check_zero_division(zero_division)
    stats = binary_batch_stats(preds, target, threshold, multidim_average, ignore_index)
    return compute.precision(stats, "micro", zero_division)


def multiclass_precision(
    preds: Tensor,
    target: Tensor,
    num_classes: int,
    average: Optional[str] = "macro",
    top_k: int = 1,
    multidim_average: str = "global",
    ignore_index: Optional[int] = None,
    validate_args: bool = True,
    zero_division: float = 0,
) -> Tensor:
    average, zero_division = update.check_average(average), update.check_zero_division(zero_division)
    stats = multiclass_batch_stats(preds, target, num_classes, top_k, multidim_average, ignore_index)
    return compute.precision(stats, average, zero_division)


def multilabel_precision(
    preds: Tensor,
    target: Tensor,
    num_labels: int,
    threshold: float = 0.5,
    average: Optional[str] = "macro",
    multidim_average: str = "global",
    ignore_index: Optional[int] = None,
    validate_args: bool = True,
    zero_division: float = 0,
) -> Tensor:
    average, zero_division = update.check_average(average), update.check_zero_division(zero_division)
    stats = multilabel_batch_stats(preds, target, num_labels, threshold, multidim_average, ignore_index)
    return compute.precision(stats, average, zero_division)


def binary_recall(
    preds: Tensor,
    target: Tensor,
    threshold: float = 0.5,
    multidim_average: str = "global",
    ignore_index: Optional[int] = None,
    validate_args: bool = True,
    zero_division: float = 0,
) -> Tensor:
    zero_division = update.check_zero_division(zero_division)
    stats = binary_batch_stats(preds, target, threshold, multidim_average, ignore_index)
    return compute.recall(stats, "micro", zero_division)


def multiclass_recall(
    preds: Tensor,
    target: Tensor,
    num_classes: int,
    average: Optional[str] = "macro",
    top_k: int = 1,
    multidim_average: str = "global",
    ignore_index: Optional[int] = None,
    validate_args: bool = True,
    zero_division: float = 0,
) -> Tensor:
    average, zero_division = update.check_average(average), update.check_zero_division(zero_division)
    stats = multiclass_batch_stats(preds, target, num_classes, top_k, multidim_average, ignore_index)
    return compute.recall(stats, average, zero_division)


def multilabel_recall(
    preds: Tensor,
    target: Tensor,
    num_labels: int,
    threshold: float = 0.5,
    average: Optional[str] = "macro",
    multidim_average: str = "global",
    ignore_index: Optional[int] = None,
    validate_args: bool = True,
    zero_division: float = 0,
) -> Tensor:
    average, zero_division = update.check_average(average), update.check_zero_division(zero_division)
    stats = multilabel_batch_stats(preds, target, num_labels, threshold, multidim_average, ignore_index)
    return compute.recall(stats, average, zero_division)
