"""``matthews_corrcoef``, ``binary_matthews_corrcoef``, ``multiclass_matthews_corrcoef``,
``multilabel_matthews_corrcoef`` (torchmetrics.functional.classification.matthews_corrcoef's
names). Matthews' correlation of all labels' elements pooled (as torchmetrics)."""

from typing import Optional

from torch import Tensor

from ..tasks import check_task, check_task_count
from . import compute
from .stat_scores import checked_binary_confmat, checked_multiclass_confmat, checked_multilabel_confmat

__all__ = [
    "matthews_corrcoef",
    "binary_matthews_corrcoef",
    "multiclass_matthews_corrcoef",
    "multilabel_matthews_corrcoef",
]


def matthews_corrcoef(
    preds: Tensor,
    target: Tensor,
    task: str,
    threshold: float = 0.5,
    num_classes: Optional[int] = None,
    num_labels: Optional[int] = None,
    ignore_index: Optional[int] = None,
    validate_args: bool = True,
) -> Tensor:
    task = check_task(task)
    if task == "binary":
        return binary_matthews_corrcoef(preds, target, threshold, ignore_index, validate_args)
    if task == "multiclass":
        check_task_count("num_classes", num_classes, task)
        return multiclass_matthews_corrcoef(preds, target, num_classes, ignore_index, validate_args)
    check_task_count("num_labels", num_labels, task)
    return multilabel_matthews_corrcoef(preds, target, num_labels, threshold, ignore_index, validate_args)


def binary_matthews_corrcoef(
    preds: Tensor,
    target: Tensor,
    threshold: float = 0.5,
    ignore_index: Optional[int] = None,
    validate_args: bool = True,
) -> Tensor:
    return compute.matthews_corrcoef(checked_binary_confmat(preds, target, threshold, ignore_index))


def multiclass_matthews_corrcoef(
    preds: Tensor, target: Tensor, num_classes: int, ignore_index: Optional[int] = None, validate_args: bool = True
) -> Tensor:
    return compute.matthews_corrcoef(checked_multiclass_confmat(preds, target, num_classes, ignore_index))


def multilabel_matthews_corrcoef(
    preds: Tensor,
    target: Tensor,
    num_labels: int,
    threshold: float = 0.5,
    ignore_index: Optional[int] = None,
    validate_args: bool = True,
) -> Tensor:
    """Matthews' correlation of all labels' elements pooled (as torchmetrics)."""
    return compute.matthews_corrcoef(checked_multilabel_confmat(preds, target, num_labels, threshold, ignore_index))
