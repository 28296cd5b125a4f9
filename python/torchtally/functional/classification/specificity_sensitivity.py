"""``binary_specificity_at_sensitivity``, ``multiclass_specificity_at_sensitivity``,
``multilabel_specificity_at_sensitivity``, ``specificity_at_sensitivity``
(torchmetrics.functional.classification.specificity_sensitivity's names). (specificity,
threshold)."""

from typing import Optional, Tuple

import torch  # noqa: F401  (the examples use it)
from torch import Tensor

from ..curves.readouts import check_fraction, specificity_at_sensitivity_from
from ..tasks import check_task, check_task_count
from .eer import Thresholds
from .precision_recall_curve import batch_states, curve_task

__all__ = [
    "binary_specificity_at_sensitivity",
    "multiclass_specificity_at_sensitivity",
    "multilabel_specificity_at_sensitivity",
    "specificity_at_sensitivity",
]


def binary_specificity_at_sensitivity(
    preds: Tensor,
    target: Tensor,
    min_sensitivity: float,
    thresholds: Thresholds = None,
    ignore_index: Optional[int] = None,
    validate_args: bool = True,
) -> Tuple[Tensor, Tensor]:
    """(specificity, threshold): the highest 1 - FPR where TPR >= ``min_sensitivity`` (0-d tensors).

    >>> binary_specificity_at_sensitivity(torch.tensor([0.2, 0.7, 0.6, 0.9]), torch.tensor([0, 0, 1, 1]), 0.5)
    (tensor(1.), tensor(0.9000))
    """
    min_sensitivity = check_fraction("min_sensitivity", min_sensitivity)
    task = curve_task("binary", 1, thresholds, ignore_index)
    return specificity_at_sensitivity_from(task, batch_states(task, preds, target), min_sensitivity)


def multiclass_specificity_at_sensitivity(
    preds: Tensor,
    target: Tensor,
    num_classes: int,
    min_sensitivity: float,
    thresholds: Thresholds = None,
    ignore_index: Optional[int] = None,
    validate_args: bool = True,
) -> Tuple[Tensor, Tensor]:
    """(specificity, threshold): the highest 1 - FPR where TPR >= ``min_sensitivity``, one-vs-rest ([C] tensors).

    >>> preds = torch.tensor([[0.7, 0.2, 0.1], [0.2, 0.5, 0.3], [0.1, 0.3, 0.6], [0.4, 0.4, 0.2]])
    >>> multiclass_specificity_at_sensitivity(preds, torch.tensor([0, 2, 2, 1]), 3, 0.5)
    (tensor([1.0000, 0.6667, 1.0000]), tensor([0.7000, 0.4000, 0.6000]))
    """
    min_sensitivity = check_fraction("min_sensitivity", min_sensitivity)
    task = curve_task("multiclass", num_classes, thresholds, ignore_index)
    return specificity_at_sensitivity_from(task, batch_states(task, preds, target), min_sensitivity)


def multilabel_specificity_at_sensitivity(
    preds: Tensor,
    target: Tensor,
    num_labels: int,
    min_sensitivity: float,
    thresholds: Thresholds = None,
    ignore_index: Optional[int] = None,
    validate_args: bool = True,
) -> Tuple[Tensor, Tensor]:
    """(specificity, threshold): the highest 1 - FPR where TPR >= ``min_sensitivity``, per label ([L] tensors).

    >>> preds = torch.tensor([[0.9, 0.1], [0.2, 0.8], [0.7, 0.3], [0.1, 0.6]])
    >>> multilabel_specificity_at_sensitivity(preds, torch.tensor([[1, 0], [0, 1], [1, 1], [0, 0]]), 2, 0.5)
    (tensor([1., 1.]), tensor([0.9000, 0.8000]))
    """
    min_sensitivity = check_fraction("min_sensitivity", min_sensitivity)
    task = curve_task("multilabel", num_labels, thresholds, ignore_index)
    return specificity_at_sensitivity_from(task, batch_states(task, preds, target), min_sensitivity)


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
