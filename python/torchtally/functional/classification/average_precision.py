"""``binary_average_precision``, ``multiclass_average_precision``,
``multilabel_average_precision``, ``average_precision``
(torchmetrics.functional.classification.average_precision's names). Average precision (area
under the step precision-recall curve) of a binary task."""

from typing import Optional

from torch import Tensor

from ..curves.compute import average_precision_from
from ..curves.update import CurveTask, check_average
from ..tasks import check_task, check_task_count
from .precision_recall_curve import AVERAGES, LABEL_AVERAGES, Thresholds, batch_states, curve_task

__all__ = [
    "binary_average_precision",
    "multiclass_average_precision",
    "multilabel_average_precision",
    "average_precision",
]


def binary_average_precision(
    preds: Tensor,
    target: Tensor,
    thresholds: Thresholds = None,
    ignore_index: Optional[int] = None,
    validate_args: bool = True,
) -> Tensor:
    """Average precision (area under the step precision-recall curve) of a binary task.

    >>> binary_average_precision(torch.tensor([0.2, 0.7, 0.6, 0.9]), torch.tensor([0, 0, 1, 1]))
    tensor(0.8333)
    """
    task = CurveTask("binary", 1, thresholds, ignore_index)
    return average_precision_from(task, batch_states(task, preds, target), None)


def multiclass_average_precision(
    preds: Tensor,
    target: Tensor,
    num_classes: int,
    average: Optional[str] = "macro",
    thresholds: Thresholds = None,
    ignore_index: Optional[int] = None,
    validate_args: bool = True,
) -> Tensor:
    """One-vs-rest average precision per class, averaged ("macro", "weighted") or not ("none").

    >>> preds = torch.tensor([[0.7, 0.2, 0.1], [0.2, 0.5, 0.3], [0.1, 0.3, 0.6], [0.4, 0.4, 0.2]])
    >>> multiclass_average_precision(preds, torch.tensor([0, 2, 2, 1]), 3)
    tensor(0.8333)
    """
    average = check_average(average, AVERAGES)
    task = curve_task("multiclass", num_classes, thresholds, ignore_index)
    return average_precision_from(task, batch_states(task, preds, target), average)


def multilabel_average_precision(
    preds: Tensor,
    target: Tensor,
    num_labels: int,
    average: Optional[str] = "macro",
    thresholds: Thresholds = None,
    ignore_index: Optional[int] = None,
    validate_args: bool = True,
) -> Tensor:
    """Average precision per label, averaged ("micro", "macro", "weighted") or not ("none").

    >>> preds = torch.tensor([[0.9, 0.1], [0.2, 0.8], [0.7, 0.3], [0.1, 0.6]])
    >>> multilabel_average_precision(preds, torch.tensor([[1, 0], [0, 1], [1, 1], [0, 0]]), 2, average="micro")
    tensor(0.9500)
    """
    average = check_average(average, LABEL_AVERAGES)
    task = curve_task("multilabel", num_labels, thresholds, ignore_index)
    return average_precision_from(task, batch_states(task, preds, target), average)


def average_precision(
    preds: Tensor,
    target: Tensor,
    task: str,
    thresholds: Thresholds = None,
    num_classes: Optional[int] = None,
    num_labels: Optional[int] = None,
    average: Optional[str] = "macro",
    ignore_index: Optional[int] = None,
    validate_args: bool = True,
) -> Tensor:
    """``binary_``, ``multiclass_`` or ``multilabel_average_precision``, by ``task``.

    >>> average_precision(torch.tensor([0.2, 0.7, 0.6, 0.9]), torch.tensor([0, 0, 1, 1]), task="binary")
    tensor(0.8333)
    """
    task = check_task(task)
    if task == "binary":
        return binary_average_precision(preds, target, thresholds, ignore_index)
    if task == "multiclass":
        return multiclass_average_precision(
            preds, target, check_task_count("num_classes", num_classes), average, thresholds, ignore_index
        )
    return multilabel_average_precision(
        preds, target, check_task_count("num_labels", num_labels), average, thresholds, ignore_index
    )
