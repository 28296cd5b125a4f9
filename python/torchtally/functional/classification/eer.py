"""Functional forms of the curve readouts (EER, LogAUC, precision at fixed recall, recall at
fixed precision, sensitivity at specificity, specificity at sensitivity), binary, multiclass and
multilabel, with torchmetrics 1.9's names, arguments and defaults: one batch in, the readout of
its ROC or precision-recall curve out (the rules: torchtally.functional.curves.readouts).

``thresholds=None`` reads the exact curve (every distinct score a threshold), an int, list or
tensor the binned one (as the other curve forms, torchtally.functional.classification.roc, ...).
Each readout's task form (``eer(..., task=...)``, ...) is in its file (eer.py, logauc.py, ...).

Differences from torchmetrics: ``min_recall``, ``min_precision``, ``min_specificity``,
``min_sensitivity`` and ``fpr_range`` are always checked (a number outside [0, 1] raises
ValueError; torchmetrics lets any float through, and checks ``fpr_range`` only in some forms),
and so is the batch, whatever ``validate_args`` says; the curves' own differences (float32
scores in exact mode, sorted thresholds) hold here too.

>>> import torch
>>> preds = torch.tensor([0.1, 0.4, 0.35, 0.8])
>>> target = torch.tensor([0, 0, 1, 1])
>>> binary_eer(preds, target)
tensor(0.5000)
>>> from torchtally.functional.classification import binary_recall_at_fixed_precision
>>> binary_recall_at_fixed_precision(preds, target, min_precision=0.6)
(tensor(1.), tensor(0.3500))
"""

from typing import Optional, Tuple, Union

import torch  # noqa: F401  (the examples use it)
from torch import Tensor

from ..curves.readouts import eer_from
from ..curves.update import check_average
from ..tasks import check_task, check_task_count
from .precision_recall_curve import batch_states, curve_task

__all__ = ["Thresholds", "FprRange", "binary_eer", "multiclass_eer", "multilabel_eer", "eer"]

Thresholds = Optional[Union[int, list, Tensor]]
FprRange = Tuple[float, float]
_EER_AVERAGES = (None, "micro", "macro")


def binary_eer(
    preds: Tensor,
    target: Tensor,
    thresholds: Thresholds = None,
    ignore_index: Optional[int] = None,
    validate_args: bool = True,
) -> Tensor:
    """Equal error rate of a binary task: (FPR + FNR) / 2 where they are closest on the ROC curve.

    >>> binary_eer(torch.tensor([0.2, 0.7, 0.6, 0.9]), torch.tensor([0, 0, 1, 1]), thresholds=5)
    tensor(0.2500)
    """
    task = curve_task("binary", 1, thresholds, ignore_index)
    return eer_from(task, batch_states(task, preds, target))


def multiclass_eer(
    preds: Tensor,
    target: Tensor,
    num_classes: int,
    thresholds: Thresholds = None,
    average: Optional[str] = None,
    ignore_index: Optional[int] = None,
    validate_args: bool = True,
) -> Tensor:
    """One-vs-rest EER per class [C]; ``average`` "micro" (classes pooled) or "macro" (of the
    averaged ROC curve): a scalar.

    >>> preds = torch.tensor([[0.7, 0.2, 0.1], [0.2, 0.5, 0.3], [0.1, 0.3, 0.6], [0.4, 0.4, 0.2]])
    >>> multiclass_eer(preds, torch.tensor([0, 2, 2, 1]), 3)
    tensor([0.0000, 0.1667, 0.0000])
    """
    average = check_average(average, _EER_AVERAGES)
    task = curve_task("multiclass", num_classes, thresholds, ignore_index)
    return eer_from(task, batch_states(task, preds, target), average)


def multilabel_eer(
    preds: Tensor,
    target: Tensor,
    num_labels: int,
    thresholds: Thresholds = None,
    ignore_index: Optional[int] = None,
    validate_args: bool = True,
) -> Tensor:
    """EER per label [L].

    >>> preds = torch.tensor([[0.9, 0.1], [0.2, 0.8], [0.7, 0.3], [0.1, 0.6]])
    >>> multilabel_eer(preds, torch.tensor([[1, 0], [0, 1], [1, 1], [0, 0]]), 2)
    tensor([0.0000, 0.5000])
    """
    task = curve_task("multilabel", num_labels, thresholds, ignore_index)
    return eer_from(task, batch_states(task, preds, target))


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
