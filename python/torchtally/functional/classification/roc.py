"""``binary_roc``, ``multiclass_roc``, ``multilabel_roc``, ``roc``
(torchmetrics.functional.classification.roc's names). (fpr, tpr, thresholds) with thresholds
descending."""

from typing import Optional, Tuple

from torch import Tensor

from ..curves.compute import roc_from
from ..curves.update import CurveTask, check_average
from ..tasks import check_task, check_task_count
from .precision_recall_curve import CURVE_AVERAGES, Curve, Thresholds, batch_states, curve_task

__all__ = ["binary_roc", "multiclass_roc", "multilabel_roc", "roc"]


def binary_roc(
    preds: Tensor,
    target: Tensor,
    thresholds: Thresholds = None,
    ignore_index: Optional[int] = None,
    validate_args: bool = True,
) -> Tuple[Tensor, Tensor, Tensor]:
    """(fpr, tpr, thresholds) with thresholds descending. Exact: one point per distinct score,
    after the origin at threshold 1.0. Binned: one point per threshold.

    >>> fpr, tpr, thr = binary_roc(torch.tensor([0.2, 0.7, 0.6, 0.9]), torch.tensor([0, 0, 1, 1]))
    >>> fpr, tpr
    (tensor([0.0000, 0.0000, 0.5000, 0.5000, 1.0000]), tensor([0.0000, 0.5000, 0.5000, 1.0000, 1.0000]))
    """
    task = CurveTask("binary", 1, thresholds, ignore_index)
    return roc_from(task, batch_states(task, preds, target))  # type: ignore[return-value]  # binary: one column, tensors


def multiclass_roc(
    preds: Tensor,
    target: Tensor,
    num_classes: int,
    thresholds: Thresholds = None,
    average: Optional[str] = None,
    ignore_index: Optional[int] = None,
    validate_args: bool = True,
) -> Curve:
    """One-vs-rest ROC per class: binned [C, T] tensors (thresholds [T]), exact lists of
    tensors; average "micro" pools the classes, "macro" averages the curves (interpolated).

    >>> fpr, tpr, thr = multiclass_roc(torch.eye(3), torch.tensor([0, 1, 2]), 3, thresholds=3)
    >>> fpr.shape, thr
    (torch.Size([3, 3]), tensor([1.0000, 0.5000, 0.0000]))
    """
    average = check_average(average, CURVE_AVERAGES)
    task = curve_task("multiclass", num_classes, thresholds, ignore_index)
    return roc_from(task, batch_states(task, preds, target), average)


def multilabel_roc(
    preds: Tensor,
    target: Tensor,
    num_labels: int,
    thresholds: Thresholds = None,
    ignore_index: Optional[int] = None,
    validate_args: bool = True,
) -> Curve:
    """ROC per label: binned [L, T] tensors, exact lists of tensors.

    >>> fpr, tpr, thr = multilabel_roc(torch.eye(2), torch.eye(2, dtype=torch.long), 2)
    >>> tpr
    [tensor([0., 1., 1.]), tensor([0., 1., 1.])]
    """
    task = curve_task("multilabel", num_labels, thresholds, ignore_index)
    return roc_from(task, batch_states(task, preds, target))


def roc(
    preds: Tensor,
    target: Tensor,
    task: str,
    thresholds: Thresholds = None,
    num_classes: Optional[int] = None,
    num_labels: Optional[int] = None,
    average: Optional[str] = None,
    ignore_index: Optional[int] = None,
    validate_args: bool = True,
) -> Curve:
    """binary_roc, multiclass_roc or multilabel_roc, by ``task`` (``average``: multiclass only).

    >>> fpr, tpr, thr = roc(torch.tensor([0.2, 0.7, 0.6, 0.9]), torch.tensor([0, 0, 1, 1]), task="binary", thresholds=3)
    >>> tpr
    tensor([0., 1., 1.])
    """
    task = check_task(task)
    if task == "binary":
        return binary_roc(preds, target, thresholds, ignore_index)
    if task == "multiclass":
        return multiclass_roc(
            preds, target, check_task_count("num_classes", num_classes), thresholds, average, ignore_index
        )
    return multilabel_roc(preds, target, check_task_count("num_labels", num_labels), thresholds, ignore_index)
