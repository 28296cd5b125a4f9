"""``binary_recall_at_fixed_precision``, ``multiclass_recall_at_fixed_precision``,
``multilabel_recall_at_fixed_precision``, ``recall_at_fixed_precision``
(torchmetrics.functional.classification.recall_fixed_precision's names). (recall, threshold)."""

from typing import Optional, Tuple

import torch  # noqa: F401  (the examples use it)
from torch import Tensor

from ..curves.readouts import check_fraction, recall_at_fixed_precision_from
from ..tasks import check_task, check_task_count
from .eer import Thresholds
from .precision_recall_curve import batch_states, curve_task

__all__ = [
    "binary_recall_at_fixed_precision",
    "multiclass_recall_at_fixed_precision",
    "multilabel_recall_at_fixed_precision",
    "recall_at_fixed_precision",
]


def binary_recall_at_fixed_precision(
    preds: Tensor,
    target: Tensor,
    min_precision: float,
    thresholds: Thresholds = None,
    ignore_index: Optional[int] = None,
    validate_args: bool = True,
) -> Tuple[Tensor, Tensor]:
    """(recall, threshold): the highest recall where precision >= ``min_precision`` (0-d tensors).

    >>> binary_recall_at_fixed_precision(torch.tensor([0.2, 0.7, 0.6, 0.9]), torch.tensor([0, 0, 1, 1]), 0.5)
    (tensor(1.), tensor(0.6000))
    """
    min_precision = check_fraction("min_precision", min_precision)
    task = curve_task("binary", 1, thresholds, ignore_index)
    return recall_at_fixed_precision_from(task, batch_states(task, preds, target), min_precision)


def multiclass_recall_at_fixed_precision(
    preds: Tensor,
    target: Tensor,
    num_classes: int,
    min_precision: float,
    thresholds: Thresholds = None,
    ignore_index: Optional[int] = None,
    validate_args: bool = True,
) -> Tuple[Tensor, Tensor]:
    """(recall, threshold): the highest recall where precision >= ``min_precision``, one-vs-rest ([C] tensors).

    >>> preds = torch.tensor([[0.7, 0.2, 0.1], [0.2, 0.5, 0.3], [0.1, 0.3, 0.6], [0.4, 0.4, 0.2]])
    >>> multiclass_recall_at_fixed_precision(preds, torch.tensor([0, 2, 2, 1]), 3, 0.5)
    (tensor([1., 1., 1.]), tensor([0.7000, 0.4000, 0.3000]))
    """
    min_precision = check_fraction("min_precision", min_precision)
    task = curve_task("multiclass", num_classes, thresholds, ignore_index)
    return recall_at_fixed_precision_from(task, batch_states(task, preds, target), min_precision)


def multilabel_recall_at_fixed_precision(
    preds: Tensor,
    target: Tensor,
    num_labels: int,
    min_precision: float,
    thresholds: Thresholds = None,
    ignore_index: Optional[int] = None,
    validate_args: bool = True,
) -> Tuple[Tensor, Tensor]:
    """(recall, threshold): the highest recall where precision >= ``min_precision``, per label ([L] tensors).

    >>> preds = torch.tensor([[0.9, 0.1], [0.2, 0.8], [0.7, 0.3], [0.1, 0.6]])
    >>> multilabel_recall_at_fixed_precision(preds, torch.tensor([[1, 0], [0, 1], [1, 1], [0, 0]]), 2, 0.5)
    (tensor([1., 1.]), tensor([0.7000, 0.3000]))
    """
    min_precision = check_fraction("min_precision", min_precision)
    task = curve_task("multilabel", num_labels, thresholds, ignore_index)
    return recall_at_fixed_precision_from(task, batch_states(task, preds, target), min_precision)


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
