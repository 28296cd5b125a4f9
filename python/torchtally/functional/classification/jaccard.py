"""``jaccard_index``, ``binary_jaccard_index``, ``multiclass_jaccard_index``,
``multilabel_jaccard_index``, at torchmetrics' path
torchmetrics.functional.classification.jaccard."""

from typing import Optional

from torch import Tensor

from ..tasks import check_task, check_task_count
from . import compute, update
from .stat_scores import checked_binary_confmat, checked_multiclass_confmat, checked_multilabel_confmat

__all__ = ["jaccard_index", "binary_jaccard_index", "multiclass_jaccard_index", "multilabel_jaccard_index"]


def jaccard_index(
    preds: Tensor,
    target: Tensor,
    task: str,
    threshold: float = 0.5,
    num_classes: Optional[int] = None,
    num_labels: Optional[int] = None,
    average: Optional[str] = "macro",
    ignore_index: Optional[int] = None,
    validate_args: bool = True,
    zero_division: float = 0.0,
) -> Tensor:
    task = check_task(task)
    if task == "binary":
        return binary_jaccard_index(preds, target, threshold, ignore_index, validate_args, zero_division)
    if task == "multiclass":
        check_task_count("num_classes", num_classes, task)
        return multiclass_jaccard_index(preds, target, num_classes, average, ignore_index, validate_args, zero_division)
    check_task_count("num_labels", num_labels, task)
    return multilabel_jaccard_index(
        preds, target, num_labels, threshold, average, ignore_index, validate_args, zero_division
    )


def binary_jaccard_index(
    preds: Tensor,
    target: Tensor,
    threshold: float = 0.5,
    ignore_index: Optional[int] = None,
    validate_args: bool = True,
    zero_division: float = 0.0,
) -> Tensor:
    zero_division = update.check_zero_division(zero_division)
    return compute.jaccard_index(
        checked_binary_confmat(preds, target, threshold, ignore_index), "binary", "micro", zero_division=zero_division
    )


def multiclass_jaccard_index(
    preds: Tensor,
    target: Tensor,
    num_classes: int,
    average: Optional[str] = "macro",
    ignore_index: Optional[int] = None,
    validate_args: bool = True,
    zero_division: float = 0.0,
) -> Tensor:
    average, zero_division = update.check_average(average), update.check_zero_division(zero_division)
    confmat = checked_multiclass_confmat(preds, target, num_classes, ignore_index)
    return compute.jaccard_index(confmat, "multiclass", average, ignore_index, zero_division)


def multilabel_jaccard_index(
    preds: Tensor,
    target: Tensor,
    num_labels: int,
    threshold: float = 0.5,
    average: Optional[str] = "macro",
    ignore_index: Optional[int] = None,
    validate_args: bool = True,
    zero_division: float = 0.0,
) -> Tensor:
    average, zero_division = update.check_average(average), update.check_zero_division(zero_division)
    confmat = checked_multilabel_confmat(preds, target, num_labels, threshold, ignore_index)
    return compute.jaccard_index(confmat, "multilabel", average, zero_division=zero_division)
