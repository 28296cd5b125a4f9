"""``cohen_kappa``, ``binary_cohen_kappa``, ``multiclass_cohen_kappa``, at torchmetrics' path
torchmetrics.functional.classification.cohen_kappa."""

from typing import Optional

from torch import Tensor

from ..tasks import check_task, check_task_count
from . import compute, update
from .stat_scores import checked_binary_confmat, checked_multiclass_confmat

__all__ = ["cohen_kappa", "binary_cohen_kappa", "multiclass_cohen_kappa"]


def cohen_kappa(
    preds: Tensor,
    target: Tensor,
    task: str,
    threshold: float = 0.5,
    num_classes: Optional[int] = None,
    weights: Optional[str] = None,
    ignore_index: Optional[int] = None,
    validate_args: bool = True,
) -> Tensor:
    task = check_task(task, ("binary", "multiclass"))
    if task == "binary":
        return binary_cohen_kappa(preds, target, threshold, weights, ignore_index, validate_args)
    check_task_count("num_classes", num_classes, task)
    return multiclass_cohen_kappa(preds, target, num_classes, weights, ignore_index, validate_args)


def binary_cohen_kappa(
    preds: Tensor,
    target: Tensor,
    threshold: float = 0.5,
    weights: Optional[str] = None,
    ignore_index: Optional[int] = None,
    validate_args: bool = True,
) -> Tensor:
    weights = update.check_kappa_weights(weights)
    return compute.cohen_kappa(checked_binary_confmat(preds, target, threshold, ignore_index), weights)


def multiclass_cohen_kappa(
    preds: Tensor,
    target: Tensor,
    num_classes: int,
    weights: Optional[str] = None,
    ignore_index: Optional[int] = None,
    validate_args: bool = True,
) -> Tensor:
    weights = update.check_kappa_weights(weights)
    return compute.cohen_kappa(checked_multiclass_confmat(preds, target, num_classes, ignore_index), weights)
