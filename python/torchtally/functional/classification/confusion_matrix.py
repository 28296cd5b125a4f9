"""``confusion_matrix``, ``binary_confusion_matrix``, ``multiclass_confusion_matrix``,
``multilabel_confusion_matrix`` (torchmetrics.functional.classification.confusion_matrix's
names). [2, 2], row = target, column = prediction."""

from typing import Optional

from torch import Tensor

from ..tasks import check_task, check_task_count
from . import compute, update
from .stat_scores import checked_binary_confmat, checked_multiclass_confmat, checked_multilabel_confmat

__all__ = ["confusion_matrix", "binary_confusion_matrix", "multiclass_confusion_matrix", "multilabel_confusion_matrix"]


def confusion_matrix(
    preds: Tensor,
    target: Tensor,
    task: str,
    threshold: float = 0.5,
    num_classes: Optional[int] = None,
    num_labels: Optional[int] = None,
    normalize: Optional[str] = None,
    ignore_index: Optional[int] = None,
    validate_args: bool = True,
) -> Tensor:
    task = check_task(task)
    if task == "binary":
        return binary_confusion_matrix(preds, target, threshold, normalize, ignore_index, validate_args)
    if task == "multiclass":
        check_task_count("num_classes", num_classes, task)
        return multiclass_confusion_matrix(preds, target, num_classes, normalize, ignore_index, validate_args)
    check_task_count("num_labels", num_labels, task)
    return multilabel_confusion_matrix(preds, target, num_labels, threshold, normalize, ignore_index, validate_args)


def binary_confusion_matrix(
    preds: Tensor,
    target: Tensor,
    threshold: float = 0.5,
    normalize: Optional[str] = None,
    ignore_index: Optional[int] = None,
    validate_args: bool = True,
) -> Tensor:
    """[2, 2], row = target, column = prediction; int64, or float32 when normalised."""
    normalize = update.check_normalize(normalize)
    return compute.confusion_matrix(checked_binary_confmat(preds, target, threshold, ignore_index), normalize)


def multiclass_confusion_matrix(
    preds: Tensor,
    target: Tensor,
    num_classes: int,
    normalize: Optional[str] = None,
    ignore_index: Optional[int] = None,
    validate_args: bool = True,
) -> Tensor:
    """[C, C], row = target, column = prediction; int64, or float32 when normalised."""
    normalize = update.check_normalize(normalize)
    return compute.confusion_matrix(checked_multiclass_confmat(preds, target, num_classes, ignore_index), normalize)


def multilabel_confusion_matrix(
    preds: Tensor,
    target: Tensor,
    num_labels: int,
    threshold: float = 0.5,
    normalize: Optional[str] = None,
    ignore_index: Optional[int] = None,
    validate_args: bool = True,
) -> Tensor:
    """[L, 2, 2]: per label, row = target, column = prediction; int64, or float32 when normalised."""
    normalize = update.check_normalize(normalize)
    return compute.confusion_matrix(
        checked_multilabel_confmat(preds, target, num_labels, threshold, ignore_index), normalize
    )
