"""``logauc``, ``binary_logauc``, ``multiclass_logauc``, ``multilabel_logauc``
(torchmetrics.functional.classification.logauc's names). The task form ``logauc(preds, target,
task=...)`` calls the task's form, with torchmetrics 1.9's arguments in its order; the rules of
every readout: eer.py.

>>> import torch
>>> logauc(torch.tensor([0.2, 0.7, 0.6, 0.9]), torch.tensor([0, 0, 1, 1]), task="binary")
tensor(0.5000)
"""

from typing import Optional

import torch  # noqa: F401  (the examples use it)
from torch import Tensor

from ..curves.readouts import check_fpr_range, check_logauc_average, logauc_from
from ..tasks import check_task, check_task_count
from .eer import FprRange, Thresholds
from .precision_recall_curve import batch_states, curve_task

__all__ = ["logauc", "binary_logauc", "multiclass_logauc", "multilabel_logauc"]


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


def binary_logauc(
    preds: Tensor,
    target: Tensor,
    fpr_range: FprRange = (0.001, 0.1),
    thresholds: Thresholds = None,
    ignore_index: Optional[int] = None,
    validate_args: bool = True,
) -> Tensor:
    """Area under TPR over log10(FPR) within ``fpr_range``, over the range's log10 width.

    >>> binary_logauc(torch.tensor([0.2, 0.7, 0.6, 0.9]), torch.tensor([0, 0, 1, 1]))
    tensor(0.5000)
    """
    fpr_range = check_fpr_range(fpr_range)
    task = curve_task("binary", 1, thresholds, ignore_index)
    return logauc_from(task, batch_states(task, preds, target), fpr_range)


def multiclass_logauc(
    preds: Tensor,
    target: Tensor,
    num_classes: int,
    fpr_range: FprRange = (0.001, 0.1),
    average: Optional[str] = "macro",
    thresholds: Thresholds = None,
    ignore_index: Optional[int] = None,
    validate_args: bool = True,
) -> Tensor:
    """One-vs-rest LogAUC per class, averaged ("macro", NaN classes left out) or not ("none", None).

    >>> preds = torch.tensor([[0.7, 0.2, 0.1], [0.2, 0.5, 0.3], [0.1, 0.3, 0.6], [0.4, 0.4, 0.2]])
    >>> multiclass_logauc(preds, torch.tensor([0, 2, 2, 1]), 3, average="none")
    tensor([1., 0., 1.])
    """
    fpr_range = check_fpr_range(fpr_range)
    average = check_logauc_average(average)
    task = curve_task("multiclass", num_classes, thresholds, ignore_index)
    return logauc_from(task, batch_states(task, preds, target), fpr_range, average)


def multilabel_logauc(
    preds: Tensor,
    target: Tensor,
    num_labels: int,
    fpr_range: FprRange = (0.001, 0.1),
    average: Optional[str] = "macro",
    thresholds: Thresholds = None,
    ignore_index: Optional[int] = None,
    validate_args: bool = True,
) -> Tensor:
    """LogAUC per label, averaged ("macro") or not ("none", None).

    >>> preds = torch.tensor([[0.9, 0.1], [0.2, 0.8], [0.7, 0.3], [0.1, 0.6]])
    >>> multilabel_logauc(preds, torch.tensor([[1, 0], [0, 1], [1, 1], [0, 0]]), 2, average=None)
    tensor([1.0000, 0.5000])
    """
    fpr_range = check_fpr_range(fpr_range)
    average = check_logauc_average(average)
    task = curve_task("multilabel", num_labels, thresholds, ignore_index)
    return logauc_from(task, batch_states(task, preds, target), fpr_range, average)
