"""``hamming_distance``, ``binary_hamming_distance``, ``multiclass_hamming_distance``,
``multilabel_hamming_distance`` (torchmetrics.functional.classification.hamming's names). Share
of wrong predictions."""

from typing import Optional

from torch import Tensor

from . import compute, update
from .stat_scores import binary_batch_stats, multiclass_batch_stats, multilabel_batch_stats
from .task_dispatch import stat_family

__all__ = ["hamming_distance", "binary_hamming_distance", "multiclass_hamming_distance", "multilabel_hamming_distance"]


def hamming_distance(
    preds: Tensor,
    target: Tensor,
    task: str,
    threshold: float = 0.5,
    num_classes: Optional[int] = None,
    num_labels: Optional[int] = None,
    average: Optional[str] = "micro",
    multidim_average: Optional[str] = "global",
    top_k: Optional[int] = 1,
    ignore_index: Optional[int] = None,
    validate_args: bool = True,
) -> Tensor:
    return stat_family(
        (binary_hamming_distance, multiclass_hamming_distance, multilabel_hamming_distance),
        preds,
        target,
        task,
        threshold,
        num_classes,
        num_labels,
        average,
        multidim_average,
        top_k,
        ignore_index,
        validate_args,
    )


def binary_hamming_distance(
    preds: Tensor,
    target: Tensor,
    threshold: float = 0.5,
    multidim_average: str = "global",
    ignore_index: Optional[int] = None,
    validate_args: bool = True,
) -> Tensor:
    """Share of wrong predictions: 1 - binary_accuracy."""
    return compute.hamming_distance(
        binary_batch_stats(preds, target, threshold, multidim_average, ignore_index), "micro"
    )


def multiclass_hamming_distance(
    preds: Tensor,
    target: Tensor,
    num_classes: int,
    average: Optional[str] = "macro",
    top_k: int = 1,
    multidim_average: str = "global",
    ignore_index: Optional[int] = None,
    validate_args: bool = True,
) -> Tensor:
    """1 - accuracy per class (recall), averaged as multiclass_accuracy."""
    average = update.check_average(average)
    stats = multiclass_batch_stats(preds, target, num_classes, top_k, multidim_average, ignore_index)
    return compute.hamming_distance(stats, average)


def multilabel_hamming_distance(
    preds: Tensor,
    target: Tensor,
    num_labels: int,
    threshold: float = 0.5,
    average: Optional[str] = "macro",
    multidim_average: str = "global",
    ignore_index: Optional[int] = None,
    validate_args: bool = True,
) -> Tensor:
    """Share of wrong label decisions, per label and averaged as multilabel_accuracy."""
    average = update.check_average(average)
    stats = multilabel_batch_stats(preds, target, num_labels, threshold, multidim_average, ignore_index)
    return compute.hamming_distance(stats, average)
