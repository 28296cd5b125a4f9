"""``binary_sensitivity_at_specificity``, ``multiclass_sensitivity_at_specificity``,
``multilabel_sensitivity_at_specificity``, ``sensitivity_at_specificity``
(torchmetrics.functional.classification.sensitivity_specificity's names). (sensitivity,
threshold)."""

from typing import Optional, Tuple

import torch  # noqa: F401  (the examples use it)
from torch import Tensor

from ..curves.readouts import check_fraction, sensitivity_at_specificity_from
from ..tasks import check_task, check_task_count
from .eer import Thresholds
from .precision_recall_curve import batch_states, curve_task

__all__ = [
    "binary_sensitivity_at_specificity",
    "multiclass_sensitivity_at_specificity",
    "multilabel_sensitivity_at_specificity",
    "sensitivity_at_specificity",
]


def binary_sensitivity_at_specificity(
    preds: Tensor,
    target: Tensor,
    min_specificity: float,
    thresholds: Thresholds = None,
    ignore_index: Optional[int] = None,
    validate_args: bool = True,
) -> Tuple[Tensor, Tensor]:
    """(sensitivity, threshold): the highest TPR where 1 - FPR >= ``min_specificity`` (0-d tensors).

    >>> binary_sensitivity_at_specificity(torch.tensor([0.2, 0.7, 0.6, 0.9]), torch.tensor([0, 0, 1, 1]), 0.5)
    (tensor(1.), tensor(0.6000))
    """
    min_specificity = check_fraction("min_specificity", min_specificity)
    task = curve_task("binary", 1, thresholds, ignore_index)
    return sensitivity_at_specificity_from(task, batch_states(task, preds, target), min_specificity)


def multiclass_sensitivity_at_specificity(
    preds: Tensor,
    target: Tensor,
    num_classes: int,
    min_specificity: float,
    thresholds: Thresholds = None,
    ignore_index: Optional[int] = None,
    validate_args: bool = True,
) -> Tuple[Tensor, Tensor]:
    """(sensitivity, threshold): the highest TPR where 1 - FPR >= ``min_specificity``, one-vs-rest ([C] tensors).

    >>> preds = torch.tensor([[0.7, 0.2, 0.1], [0.2, 0.5, 0.3], [0.1, 0.3, 0.6], [0.4, 0.4, 0.2]])
    >>> multiclass_sensitivity_at_specificity(preds, torch.tensor([0, 2, 2, 1]), 3, 0.5)
    (tensor([1., 1., 1.]), tensor([0.7000, 0.4000, 0.3000]))
    """
    min_specificity = check_fraction("min_specificity", min_specificity)
    task = curve_task("multiclass", num_classes, thresholds, ignore_index)
    return sensitivity_at_specificity_from(task, batch_states(task, preds, target), min_specificity)


def multilabel_sensitivity_at_specificity(
    preds: Tensor,
    target: Tensor,
    num_labels: int,
    min_specificity: float,
    thresholds: Thresholds = None,
    ignore_index: Optional[int] = None,
    validate_args: bool = True,
) -> Tuple[Tensor, Tensor]:
    """(sensitivity, threshold): the highest TPR where 1 - FPR >= ``min_specificity``, per label ([L] tensors).

    >>> preds = torch.tensor([[0.9, 0.1], [0.2, 0.8], [0.7, 0.3], [0.1, 0.6]])
    >>> multilabel_sensitivity_at_specificity(preds, torch.tensor([[1, 0], [0, 1], [1, 1], [0, 0]]), 2, 0.5)
    (tensor([1., 1.]), tensor([0.7000, 0.3000]))
    """
    min_specificity = check_fraction("min_specificity", min_specificity)
    task = curve_task("multilabel", num_labels, thresholds, ignore_index)
    return sensitivity_at_specificity_from(task, batch_states(task, preds, target), min_specificity)


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
