"""Functional forms of the curve readouts (EER, LogAUC, precision at fixed recall, recall at
fixed precision, sensitivity at specificity, specificity at sensitivity), binary, multiclass and
multilabel, with torchmetrics 1.9's names, arguments and defaults: one batch in, the readout of
its ROC or precision-recall curve out (the rules: torchtally.functional.curves.readouts).

``thresholds=None`` reads the exact curve (every distinct score a threshold), an int, list or
tensor the binned one (as the other curve forms, torchtally.functional.curves.forms). The task
forms (``eer(..., task=...)``, ...) are in readout_task_forms.py.

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
>>> binary_recall_at_fixed_precision(preds, target, min_precision=0.6)
(tensor(1.), tensor(0.3500))
"""

from typing import Optional, Tuple, Union

from torch import Tensor

from .precision_recall_curve import batch_states, curve_task
from ..curves.readouts import check_fpr_range, check_fraction, check_logauc_average, eer_from, logauc_from, precision_at_fixed_recall_from, recall_at_fixed_precision_from, sensitivity_at_specificity_from, specificity_at_sensitivity_from
from ..curves.update import check_average

__all__ = [
    f"{task}_{name}"
    for name in (
        "eer",
        "logauc",
        "precision_at_fixed_recall",
        "recall_at_fixed_precision",
        "sensitivity_at_specificity",
        "specificity_at_sensitivity",
    )
    for task in ("binary", "multiclass", "multilabel")
]

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
