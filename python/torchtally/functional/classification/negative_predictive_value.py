"""Negative predictive value, tn / (tn + fn), as functions: the per-task forms
(``binary_negative_predictive_value``, ...) and the task form (``negative_predictive_value``),
torchmetrics' names, signatures and defaults. One batch into a fresh count state (update.py),
the value from it (compute.py), as the classes of torchtally.classification compute it."""

from typing import Optional

from torch import Tensor

from ..tasks import check_task, check_task_count
from . import compute, update
from .stat_scores import binary_batch_stats, multiclass_batch_stats, multilabel_batch_stats

__all__ = [
    "binary_negative_predictive_value",
    "multiclass_negative_predictive_value",
    "multilabel_negative_predictive_value",
    "negative_predictive_value",
]


def binary_negative_predictive_value(
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
    return compute.negative_predictive_value(stats, "micro", zero_division)


def multiclass_negative_predictive_value(
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
    return compute.negative_predictive_value(stats, average, zero_division)


def multilabel_negative_predictive_value(
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
    return compute.negative_predictive_value(stats, average, zero_division)


def negative_predictive_value(
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
    """The task's negative predictive value (``task``: "binary", "multiclass" or "multilabel")."""
    task = check_task(task)
    multidim: str = multidim_average  # type: ignore[assignment]  # None: refused by the task's function
    if task == "binary":
        return binary_negative_predictive_value(
            preds, target, threshold, multidim, ignore_index, validate_args, zero_division
        )
    if task == "multiclass":
        classes, k = check_task_count("num_classes", num_classes, task), check_task_count("top_k", top_k, task)
        return multiclass_negative_predictive_value(
            preds, target, classes, average, k, multidim, ignore_index, validate_args, zero_division
        )
    labels = check_task_count("num_labels", num_labels, task)
    return multilabel_negative_predictive_value(
        preds, target, labels, threshold, average, multidim, ignore_index, validate_args, zero_division
    )
