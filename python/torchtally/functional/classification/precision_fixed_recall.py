"""``binary_precision_at_fixed_recall``, ``multiclass_precision_at_fixed_recall``,
``multilabel_precision_at_fixed_recall``, ``precision_at_fixed_recall``
(torchmetrics.functional.classification.precision_fixed_recall's names). (precision, threshold)."""

from typing import Optional, Tuple

import torch  # noqa: F401  (the examples use it)
from torch import Tensor

from ..curves.readouts import check_fraction, precision_at_fixed_recall_from
from ..tasks import check_task, check_task_count
from .eer import Thresholds
from .precision_recall_curve import batch_states, curve_task

__all__ = [
    "binary_precision_at_fixed_recall",
    "multiclass_precision_at_fixed_recall",
    "multilabel_precision_at_fixed_recall",
    "precision_at_fixed_recall",
]


def binary_precision_at_fixed_recall(
    preds: Tensor,
    target: Tensor,
    min_recall: float,
    thresholds: Thresholds = None,
    ignore_index: Optional[int] = None,
    validate_args: bool = True,
) -> Tuple[Tensor, Tensor]:
    """(precision, threshold): the highest precision where recall >= ``min_recall`` (0-d tensors).

    >>> binary_precision_at_fixed_recall(torch.tensor([0.2, 0.7, 0.6, 0.9]), torch.tensor([0, 0, 1, 1]), 0.5)
    (tensor(1.), tensor(0.9000))
    """
    min_recall = check_fraction("min_recall", min_recall)
    task = curve_task("binary", 1, thresholds, ignore_index)
    return precision_at_fixed_recall_from(task, batch_states(task, preds, target), min_recall)


def multiclass_precision_at_fixed_recall(
    preds: Tensor,
    target: Tensor,
    num_classes: int,
    min_recall: float,
    thresholds: Thresholds = None,
    ignore_index: Optional[int] = None,
    validate_args: bool = True,
) -> Tuple[Tensor, Tensor]:
    """(precision, threshold): the highest precision where recall >= ``min_recall``, one-vs-rest ([C] tensors).

    >>> preds = torch.tensor([[0.7, 0.2, 0.1], [0.2, 0.5, 0.3], [0.1, 0.3, 0.6], [0.4, 0.4, 0.2]])
    >>> multiclass_precision_at_fixed_recall(preds, torch.tensor([0, 2, 2, 1]), 3, 0.5)
    (tensor([1.0000, 0.5000, 1.0000]), tensor([0.7000, 0.4000, 0.3000]))
    """
    min_recall = check_fraction("min_recall", min_recall)
    task = curve_task("multiclass", num_classes, thresholds, ignore_index)
    return precision_at_fixed_recall_from(task, batch_states(task, preds, target), min_recall)


def multilabel_precision_at_fixed_recall(
    preds: Tensor,
    target: Tensor,
    num_labels: int,
    min_recall: float,
    thresholds: Thresholds = None,
    ignore_index: Optional[int] = None,
    validate_args: bool = True,
) -> Tuple[Tensor, Tensor]:
    """(precision, threshold): the highest precision where recall >= ``min_recall``, per label ([L] tensors).

    >>> preds = torch.tensor([[0.9, 0.1], [0.2, 0.8], [0.7, 0.3], [0.1, 0.6]])
    >>> multilabel_precision_at_fixed_recall(preds, torch.tensor([[1, 0], [0, 1], [1, 1], [0, 0]]), 2, 0.5)
    (tensor([1., 1.]), tensor([0.7000, 0.8000]))
    """
    min_recall = check_fraction("min_recall", min_recall)
    task = curve_task("multilabel", num_labels, thresholds, ignore_index)
    return precision_at_fixed_recall_from(task, batch_states(task, preds, target), min_recall)


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
