"""Negative predictive value, tn / (tn + fn), as functions: the per-task forms
(``binary_negative_predictive_value``, ...) and the task form (``negative_predictive_value``),
torchmetrics' names, signatures and defaults. One batch into a fresh count state (update.py),
the value from it (compute.py), as the classes of torchtally.classification compute it."""

from typing import Optional

from torch import Tensor

from ..tasks import check_task, check_task_count
from . import compute, update

__all__ = [
    "binary_negative_predictive_value",
    "multiclass_negative_predictive_value",
    "multilabel_negative_predictive_value",
    "negative_predictive_value",
]


def _binary_counts(
    preds: Tensor, target: Tensor, threshold: float, multidim_average: str, ignore_index: Optional[int]
) -> compute.Stats:
    threshold, ignore_index = update.check_threshold(threshold), update.check_ignore_index(ignore_index)
    if update.check_multidim_average(multidim_average) == "samplewise":
        return compute.binary_stats(update.binary_sample_confmats(preds, target, threshold, ignore_index))
    return compute.binary_stats(update.binary_confmat(preds, target, threshold, ignore_index))


def _multiclass_counts(
    preds: Tensor, target: Tensor, num_classes: int, top_k: int, multidim_average: str, ignore_index: Optional[int]
) -> compute.Stats:
    num_classes = update.check_num_classes(num_classes)
    top_k = update.check_top_k(top_k, num_classes)
    ignore_index = update.check_ignore_index(ignore_index)
    if update.check_multidim_average(multidim_average) == "samplewise":
        return compute.sample_stats(
            update.multiclass_sample_stats(preds, target, num_classes, top_k, ignore_index), top_k
        )
    if top_k == 1:
        return compute.multiclass_stats(update.multiclass_confmat(preds, target, num_classes, ignore_index))
    return compute.topk_stats(update.multiclass_topk(preds, target, num_classes, ignore_index, top_k), top_k)


def _multilabel_counts(
    preds: Tensor, target: Tensor, num_labels: int, threshold: float, multidim_average: str, ignore_index: Optional[int]
) -> compute.Stats:
    num_labels = update.check_count("num_labels", num_labels)
    threshold, ignore_index = update.check_threshold(threshold), update.check_ignore_index(ignore_index)
    if update.check_multidim_average(multidim_average) == "samplewise":
        rows = update.multilabel_sample_confmats(preds, target, num_labels, threshold, ignore_index)
        return compute.multilabel_stats(rows)
    return compute.multilabel_stats(update.multilabel_confmat(preds, target, num_labels, threshold, ignore_index))


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
    stats = _binary_counts(preds, target, threshold, multidim_average, ignore_index)
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
    stats = _multiclass_counts(preds, target, num_classes, top_k, multidim_average, ignore_index)
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
    stats = _multilabel_counts(preds, target, num_labels, threshold, multidim_average, ignore_index)
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
