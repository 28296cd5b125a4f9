"""Task forms of the curve readouts: ``eer(preds, target, task=...)``, ``logauc``,
``precision_at_fixed_recall``, ``recall_at_fixed_precision``, ``sensitivity_at_specificity``,
``specificity_at_sensitivity``; each calls the task's form (readout_forms.py), with torchmetrics
1.9's arguments in its order.

>>> import torch
>>> eer(torch.tensor([0.2, 0.7, 0.6, 0.9]), torch.tensor([0, 0, 1, 1]), task="binary")
tensor(0.5000)
"""

from typing import Optional, Tuple

import torch  # noqa: F401  (the examples use it)
from torch import Tensor

from ..tasks import check_task, check_task_count
from .eer import FprRange, Thresholds, binary_eer, binary_logauc, binary_precision_at_fixed_recall, binary_recall_at_fixed_precision, binary_sensitivity_at_specificity, binary_specificity_at_sensitivity, multiclass_eer, multiclass_logauc, multiclass_precision_at_fixed_recall, multiclass_recall_at_fixed_precision, multiclass_sensitivity_at_specificity, multiclass_specificity_at_sensitivity, multilabel_eer, multilabel_logauc, multilabel_precision_at_fixed_recall, multilabel_recall_at_fixed_precision, multilabel_sensitivity_at_specificity, multilabel_specificity_at_sensitivity

__all__ = [
    "eer",
    "logauc",
    "precision_at_fixed_recall",
    "recall_at_fixed_precision",
    "sensitivity_at_specificity",
    "specificity_at_sensitivity",
]


def eer(
    preds: Tensor,
    target: Tensor,
    task: str,
    thresholds: Thresholds = None,
    num_classes: Optional[int] = None,
    num_labels: Optional[int] = None,
    average: Optional[str] = None,
    ignore_index: Optional[int] = None,
    validate_args: bool = True,
) -> Tensor:
    """binary_eer, multiclass_eer or multilabel_eer, by ``task`` (``average``: multiclass only).

    >>> eer(torch.tensor([0.2, 0.7, 0.6, 0.9]), torch.tensor([0, 0, 1, 1]), task="binary", thresholds=5)
    tensor(0.2500)
    """
    task = check_task(task)
    if task == "binary":
        return binary_eer(preds, target, thresholds, ignore_index)
    if task == "multiclass":
        return multiclass_eer(
            preds, target, check_task_count("num_classes", num_classes), thresholds, average, ignore_index
        )
    return multilabel_eer(preds, target, check_task_count("num_labels", num_labels), thresholds, ignore_index)


def logauc(
    preds: Tensor,
    target: Tensor,
    task: str,
    thresholds: Thresholds = None,
    num_classes: Optional[int] = None,
    num_labels: Optional[int] = None,
    fpr_range: FprRange = (0.001, 0.1),
    average: Optional[str] = None,
    ignore_index: Optional[int] = None,
    validate_args: bool = True,
) -> Tensor:
    """binary_logauc, multiclass_logauc or multilabel_logauc, by ``task`` (``average`` None here:
    one value per column, as torchmetrics' task form).

    >>> logauc(torch.tensor([0.2, 0.7, 0.6, 0.9]), torch.tensor([0, 0, 1, 1]), task="binary")
    tensor(0.5000)
    """
    task = check_task(task)
    if task == "binary":
        return binary_logauc(preds, target, fpr_range, thresholds, ignore_index)
    if task == "multiclass":
        count = check_task_count("num_classes", num_classes)
        return multiclass_logauc(preds, target, count, fpr_range, average, thresholds, ignore_index)
    count = check_task_count("num_labels", num_labels)
    return multilabel_logauc(preds, target, count, fpr_range, average, thresholds, ignore_index)


def precision_at_fixed_recall(
    preds: Tensor,
    target: Tensor,
    task: str,
    min_recall: float,
    thresholds: Thresholds = None,
    num_classes: Optional[int] = None,
    num_labels: Optional[int] = None,
    ignore_index: Optional[int] = None,
    validate_args: bool = True,
) -> Tuple[Tensor, Tensor]:
    """``binary_``, ``multiclass_`` or ``multilabel_precision_at_fixed_recall``, by ``task``.

    >>> precision_at_fixed_recall(torch.tensor([0.2, 0.7, 0.6, 0.9]), torch.tensor([0, 0, 1, 1]), "binary", 0.5)
    (tensor(1.), tensor(0.9000))
    """
    task = check_task(task)
    if task == "binary":
        return binary_precision_at_fixed_recall(preds, target, min_recall, thresholds, ignore_index)
    if task == "multiclass":
        count = check_task_count("num_classes", num_classes)
        return multiclass_precision_at_fixed_recall(preds, target, count, min_recall, thresholds, ignore_index)
    count = check_task_count("num_labels", num_labels)
    return multilabel_precision_at_fixed_recall(preds, target, count, min_recall, thresholds, ignore_index)


def recall_at_fixed_precision(
    preds: Tensor,
    target: Tensor,
    task: str,
    min_precision: float,
    thresholds: Thresholds = None,
    num_classes: Optional[int] = None,
    num_labels: Optional[int] = None,
    ignore_index: Optional[int] = None,
    validate_args: bool = True,
) -> Tuple[Tensor, Tensor]:
    """``binary_``, ``multiclass_`` or ``multilabel_recall_at_fixed_precision``, by ``task``.

    >>> recall_at_fixed_precision(torch.tensor([0.2, 0.7, 0.6, 0.9]), torch.tensor([0, 0, 1, 1]), "binary", 0.5)
    (tensor(1.), tensor(0.6000))
    """
    task = check_task(task)
    if task == "binary":
        return binary_recall_at_fixed_precision(preds, target, min_precision, thresholds, ignore_index)
    if task == "multiclass":
        count = check_task_count("num_classes", num_classes)
        return multiclass_recall_at_fixed_precision(preds, target, count, min_precision, thresholds, ignore_index)
    count = check_task_count("num_labels", num_labels)
    return multilabel_recall_at_fixed_precision(preds, target, count, min_precision, thresholds, ignore_index)


def sensitivity_at_specificity(
    preds: Tensor,
    target: Tensor,
    task: str,
    min_specificity: float,
    thresholds: Thresholds = None,
    num_classes: Optional[int] = None,
    num_labels: Optional[int] = None,
    ignore_index: Optional[int] = None,
    validate_args: bool = True,
) -> Tuple[Tensor, Tensor]:
    """``binary_``, ``multiclass_`` or ``multilabel_sensitivity_at_specificity``, by ``task``.

    >>> sensitivity_at_specificity(torch.tensor([0.2, 0.7, 0.6, 0.9]), torch.tensor([0, 0, 1, 1]), "binary", 0.5)
    (tensor(1.), tensor(0.6000))
    """
    task = check_task(task)
    if task == "binary":
        return binary_sensitivity_at_specificity(preds, target, min_specificity, thresholds, ignore_index)
    if task == "multiclass":
        count = check_task_count("num_classes", num_classes)
        return multiclass_sensitivity_at_specificity(preds, target, count, min_specificity, thresholds, ignore_index)
    count = check_task_count("num_labels", num_labels)
    return multilabel_sensitivity_at_specificity(preds, target, count, min_specificity, thresholds, ignore_index)


def specificity_at_sensitivity(
    preds: Tensor,
    target: Tensor,
    task: str,
    min_sensitivity: float,
    thresholds: Thresholds = None,
    num_classes: Optional[int] = None,
    num_labels: Optional[int] = None,
    ignore_index: Optional[int] = None,
    validate_args: bool = True,
) -> Tuple[Tensor, Tensor]:
    """``binary_``, ``multiclass_`` or ``multilabel_specificity_at_sensitivity``, by ``task``.

    >>> specificity_at_sensitivity(torch.tensor([0.2, 0.7, 0.6, 0.9]), torch.tensor([0, 0, 1, 1]), "binary", 0.5)
    (tensor(1.), tensor(0.9000))
    """
    task = check_task(task)
    if task == "binary":
        return binary_specificity_at_sensitivity(preds, target, min_sensitivity, thresholds, ignore_index)
    if task == "multiclass":
        count = check_task_count("num_classes", num_classes)
        return multiclass_specificity_at_sensitivity(preds, target, count, min_sensitivity, thresholds, ignore_index)
    count = check_task_count("num_labels", num_labels)
    return multilabel_specificity_at_sensitivity(preds, target, count, min_sensitivity, thresholds, ignore_index)
