"""Curves and ranking: AUROC, average precision, ROC and precision-recall curves.

Binary, multiclass (one-vs-rest) and multilabel forms, and the task forms ``auroc(preds,
target, task=...)``, ``average_precision``, ``roc``, ``precision_recall_curve``, with
torchmetrics' arguments in torchmetrics' order:

* ``thresholds=None`` (exact): every distinct score is a threshold, ties count as one step,
  values equal scikit-learn's roc_auc_score / average_precision_score / roc_curve
  (drop_intermediate=False) / precision_recall_curve on the float32 probabilities.
* ``thresholds=T`` (int: ``torch.linspace(0, 1, T)``), a list or a 1-D tensor (non-decreasing):
  the binned histogram kernel, O(T) memory, equal to torchmetrics' binned mode.

Scores outside [0, 1] are taken as logits (sigmoid, or softmax for multiclass); targets of the
binary and multilabel forms may be float tensors holding 0/1; see
torchtally.functional.curves.update. ``validate_args`` is accepted for torchmetrics
compatibility: inputs are always checked (the checks are part of the kernels' pass).

Undefined values: AUROC of a column without positive or without negative samples is NaN
(scikit-learn; torchmetrics returns 0) with a warning, and "macro"/"weighted" averages skip NaN
columns: an AUROC of 0 reads as a perfectly inverted ranking, a real and alarming result, and
averaging it in drags a macro AUROC down without saying so. Average precision without
positives is 0 (scikit-learn and torchmetrics), with a warning. ROC and PR curves follow
torchmetrics: the exact ROC curve starts at (0, 0) with threshold 1.0 (scikit-learn: inf);
undefined rates are 0 (ROC), NaN (binned PR, exact multiclass PR) or recall 1 (exact binary and
multilabel PR without positives), each with a warning. Values are float32. Exact mode with no
sample at all raises ValueError (torchmetrics raises too).

>>> import torch
>>> preds = torch.tensor([0.1, 0.4, 0.35, 0.8])
>>> target = torch.tensor([0, 0, 1, 1])
>>> binary_auroc(preds, target)
tensor(0.7500)
>>> binary_average_precision(preds, target)
tensor(0.8333)
"""

from typing import Any, List, Optional, Tuple, Union

import torch
from torch import Tensor

from ... import kernels
from ..curves.compute import States, precision_recall_curve_from
from ..curves.update import CurveTask, check_average, check_num
from ..tasks import check_task, check_task_count

__all__ = [
    "binary_precision_recall_curve",
    "multiclass_precision_recall_curve",
    "multilabel_precision_recall_curve",
    "precision_recall_curve",
]

Thresholds = Optional[Union[int, List[float], Tensor]]
Curve = Union[Tuple[Tensor, Tensor, Tensor], Tuple[List[Tensor], List[Tensor], List[Tensor]]]
AVERAGES = ("macro", "weighted", "none", None)
LABEL_AVERAGES = ("micro",) + AVERAGES
CURVE_AVERAGES = (None, "micro", "macro")


def batch_states(task: CurveTask, preds: Tensor, target: Tensor) -> States:
    """The state one metric of ``task`` would hold after a single update with (preds, target)."""
    if task.binned:
        name, default, _ = task.declare()[0]
        device = preds.device if isinstance(preds, Tensor) else None
        hist = default.to(device)
        task.accumulate(hist, preds, target)
        return {name: kernels.settled(hist)}
    device = preds.device if isinstance(preds, Tensor) else torch.device("cpu")
    scores, labels = task.rows(preds, target, device)
    return {"scores": scores, "labels": labels}


def curve_task(kind: str, num: Any, thresholds: Thresholds, ignore_index: Optional[int]) -> CurveTask:
    """The CurveTask of a functional form: ``num`` (num_classes / num_labels) checked; 1 for binary."""
    if kind == "binary":
        return CurveTask("binary", 1, thresholds, ignore_index)
    name, minimum = ("num_classes", 2) if kind == "multiclass" else ("num_labels", 1)
    return CurveTask(kind, check_num(name, num, minimum), thresholds, ignore_index)


def binary_precision_recall_curve(
    preds: Tensor,
    target: Tensor,
    thresholds: Thresholds = None,
    ignore_index: Optional[int] = None,
    validate_args: bool = True,
) -> Tuple[Tensor, Tensor, Tensor]:
    """(precision, recall, thresholds): thresholds ascending, then the end point (1, 0).

    >>> p, r, t = binary_precision_recall_curve(torch.tensor([0.2, 0.7, 0.6, 0.9]), torch.tensor([0, 0, 1, 1]))
    >>> p, r
    (tensor([0.5000, 0.6667, 0.5000, 1.0000, 1.0000]), tensor([1.0000, 1.0000, 0.5000, 0.5000, 0.0000]))
    """
    task = CurveTask("binary", 1, thresholds, ignore_index)
    # binary: one column, tensors
    return precision_recall_curve_from(task, batch_states(task, preds, target))  # type: ignore[return-value]


def multiclass_precision_recall_curve(
    preds: Tensor,
    target: Tensor,
    num_classes: int,
    thresholds: Thresholds = None,
    average: Optional[str] = None,
    ignore_index: Optional[int] = None,
    validate_args: bool = True,
) -> Curve:
    """One-vs-rest precision-recall curve per class (shapes as multiclass_roc, [C, T + 1]).

    >>> p, r, t = multiclass_precision_recall_curve(torch.eye(3), torch.tensor([0, 1, 2]), 3, thresholds=3)
    >>> r[0]
    tensor([1., 1., 1., 0.])
    """
    average = check_average(average, CURVE_AVERAGES)
    task = curve_task("multiclass", num_classes, thresholds, ignore_index)
    return precision_recall_curve_from(task, batch_states(task, preds, target), average)


def multilabel_precision_recall_curve(
    preds: Tensor,
    target: Tensor,
    num_labels: int,
    thresholds: Thresholds = None,
    ignore_index: Optional[int] = None,
    validate_args: bool = True,
) -> Curve:
    """Precision-recall curve per label (binned [L, T + 1] tensors, exact lists).

    >>> p, r, t = multilabel_precision_recall_curve(torch.eye(2), torch.eye(2, dtype=torch.long), 2)
    >>> p
    [tensor([0.5000, 1.0000, 1.0000]), tensor([0.5000, 1.0000, 1.0000])]
    """
    task = curve_task("multilabel", num_labels, thresholds, ignore_index)
    return precision_recall_curve_from(task, batch_states(task, preds, target))


# -- task forms: one entry point per metric, the task named by a string ---------------------


def precision_recall_curve(
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
    """``binary_``, ``multiclass_`` or ``multilabel_precision_recall_curve``, by ``task`` (``average``:
    multiclass only).

    >>> p, r, t = precision_recall_curve(torch.tensor([0.2, 0.7, 0.6, 0.9]), torch.tensor([0, 0, 1, 1]), task="binary")
    >>> r
    tensor([1.0000, 1.0000, 0.5000, 0.5000, 0.0000])
    """
    task = check_task(task)
    if task == "binary":
        return binary_precision_recall_curve(preds, target, thresholds, ignore_index)
    if task == "multiclass":
        return multiclass_precision_recall_curve(
            preds, target, check_task_count("num_classes", num_classes), thresholds, average, ignore_index
        )
    return multilabel_precision_recall_curve(
        preds, target, check_task_count("num_labels", num_labels), thresholds, ignore_index
    )
