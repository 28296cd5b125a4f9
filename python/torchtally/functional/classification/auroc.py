"""``binary_auroc``, ``multiclass_auroc``, ``multilabel_auroc``, ``auroc``
(torchmetrics.functional.classification.auroc's names). Area under the ROC curve of a binary
task."""

from typing import Optional

from torch import Tensor

from ..curves.compute import auroc_from
from ..curves.update import CurveTask, check_average, check_max_fpr
from ..tasks import check_task, check_task_count
from .precision_recall_curve import AVERAGES, LABEL_AVERAGES, Thresholds, batch_states, curve_task

__all__ = ["binary_auroc", "multiclass_auroc", "multilabel_auroc", "auroc"]


def binary_auroc(
    preds: Tensor,
    target: Tensor,
    max_fpr: Optional[float] = None,
    thresholds: Thresholds = None,
    ignore_index: Optional[int] = None,
    validate_args: bool = True,
) -> Tensor:
    """Area under the ROC curve of a binary task; ``max_fpr`` gives scikit-learn's standardised
    partial AUC. preds [N, ...] probabilities or logits, target [N, ...] in {0, 1}.

    >>> binary_auroc(torch.tensor([0.2, 0.7, 0.6, 0.9]), torch.tensor([0, 0, 1, 1]), thresholds=5)
    tensor(0.8750)
    """
    max_fpr = check_max_fpr(max_fpr)
    task = CurveTask("binary", 1, thresholds, ignore_index)
    return auroc_from(task, batch_states(task, preds, target), None, max_fpr)


def multiclass_auroc(
    preds: Tensor,
    target: Tensor,
    num_classes: int,
    average: Optional[str] = "macro",
    thresholds: Thresholds = None,
    ignore_index: Optional[int] = None,
    validate_args: bool = True,
) -> Tensor:
    """One-vs-rest AUROC per class, averaged ("macro", "weighted" by support) or not ("none").
    preds [N, C, ...], target [N, ...] class ids.

    >>> preds = torch.tensor([[0.7, 0.2, 0.1], [0.2, 0.5, 0.3], [0.1, 0.3, 0.6], [0.4, 0.4, 0.2]])
    >>> multiclass_auroc(preds, torch.tensor([0, 2, 2, 1]), 3, average="none")
    tensor([1.0000, 0.6667, 1.0000])
    """
    average = check_average(average, AVERAGES)
    task = curve_task("multiclass", num_classes, thresholds, ignore_index)
    return auroc_from(task, batch_states(task, preds, target), average)


def multilabel_auroc(
    preds: Tensor,
    target: Tensor,
    num_labels: int,
    average: Optional[str] = "macro",
    thresholds: Thresholds = None,
    ignore_index: Optional[int] = None,
    validate_args: bool = True,
) -> Tensor:
    """AUROC per label, averaged ("micro": all labels pooled, "macro", "weighted") or not ("none").
    preds [N, L, ...], target [N, L, ...] in {0, 1}.

    >>> preds = torch.tensor([[0.9, 0.1], [0.2, 0.8], [0.7, 0.3], [0.1, 0.6]])
    >>> multilabel_auroc(preds, torch.tensor([[1, 0], [0, 1], [1, 1], [0, 0]]), 2, average="none")
    tensor([1.0000, 0.7500])
    """
    average = check_average(average, LABEL_AVERAGES)
    task = curve_task("multilabel", num_labels, thresholds, ignore_index)
    return auroc_from(task, batch_states(task, preds, target), average)


def auroc(
    preds: Tensor,
    target: Tensor,
    task: str,
    thresholds: Thresholds = None,
    num_classes: Optional[int] = None,
    num_labels: Optional[int] = None,
    average: Optional[str] = "macro",
    max_fpr: Optional[float] = None,
    ignore_index: Optional[int] = None,
    validate_args: bool = True,
) -> Tensor:
    """binary_auroc, multiclass_auroc or multilabel_auroc, by ``task``.

    >>> auroc(torch.tensor([0.2, 0.7, 0.6, 0.9]), torch.tensor([0, 0, 1, 1]), task="binary")
    tensor(0.7500)
    """
    task = check_task(task)
    if task == "binary":
        return binary_auroc(preds, target, max_fpr, thresholds, ignore_index)
    if task == "multiclass":
        return multiclass_auroc(
            preds, target, check_task_count("num_classes", num_classes), average, thresholds, ignore_index
        )
    return multilabel_auroc(
        preds, target, check_task_count("num_labels", num_labels), average, thresholds, ignore_index
    )
