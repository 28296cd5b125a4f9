"""The per-task functional classification metrics (binary_*, multiclass_*, multilabel_*): one
batch into a fresh count state (update.py), the result from it (compute.py)."""

from typing import Optional

from torch import Tensor

from . import compute, update
from .task_dispatch import stat_family

__all__ = ["binary_stat_scores", "multiclass_stat_scores", "multilabel_stat_scores", "stat_scores"]


# -- the count states of one batch ---------------------------------------------------------------


# One batch's confusion matrix with the options checked: what the jaccard, MCC and kappa forms start from.
def checked_binary_confmat(preds: Tensor, target: Tensor, threshold: float, ignore_index: Optional[int]) -> Tensor:
    threshold, ignore_index = update.check_threshold(threshold), update.check_ignore_index(ignore_index)
    return update.binary_confmat(preds, target, threshold, ignore_index)


def checked_multiclass_confmat(preds: Tensor, target: Tensor, num_classes: int, ignore_index: Optional[int]) -> Tensor:
    num_classes = update.check_num_classes(num_classes)
    return update.multiclass_confmat(preds, target, num_classes, update.check_ignore_index(ignore_index))


def checked_multilabel_confmat(
    preds: Tensor, target: Tensor, num_labels: int, threshold: float, ignore_index: Optional[int]
) -> Tensor:
    num_labels = update.check_count("num_labels", num_labels)
    return update.multilabel_confmat(
        preds, target, num_labels, update.check_threshold(threshold), update.check_ignore_index(ignore_index)
    )


def binary_batch_stats(
    preds: Tensor, target: Tensor, threshold: float, multidim_average: str, ignore_index: Optional[int]
) -> compute.Stats:
    if update.check_multidim_average(multidim_average) == "samplewise":
        threshold, ignore_index = update.check_threshold(threshold), update.check_ignore_index(ignore_index)
        return compute.binary_stats(update.binary_sample_confmats(preds, target, threshold, ignore_index))
    return compute.binary_stats(checked_binary_confmat(preds, target, threshold, ignore_index))


def multiclass_batch_stats(
    preds: Tensor, target: Tensor, num_classes: object, top_k: int, multidim_average: str, ignore_index: Optional[int]
) -> compute.Stats:
    num_classes = update.check_num_classes(num_classes)
    top_k = update.check_top_k(top_k, num_classes)
    ignore_index = update.check_ignore_index(ignore_index)
    if update.check_multidim_average(multidim_average) == "samplewise":
        rows = update.multiclass_sample_stats(preds, target, num_classes, top_k, ignore_index)
        return compute.sample_stats(rows, top_k)
    if top_k == 1:
        return compute.multiclass_stats(update.multiclass_confmat(preds, target, num_classes, ignore_index))
    return compute.topk_stats(update.multiclass_topk(preds, target, num_classes, ignore_index, top_k), top_k)


def multilabel_batch_stats(
    preds: Tensor, target: Tensor, num_labels: int, threshold: float, multidim_average: str, ignore_index: Optional[int]
) -> compute.Stats:
    if update.check_multidim_average(multidim_average) == "samplewise":
        num_labels = update.check_count("num_labels", num_labels)
        threshold, ignore_index = update.check_threshold(threshold), update.check_ignore_index(ignore_index)
        rows = update.multilabel_sample_confmats(preds, target, num_labels, threshold, ignore_index)
        return compute.multilabel_stats(rows)
    return compute.multilabel_stats(checked_multilabel_confmat(preds, target, num_labels, threshold, ignore_index))


# -- accuracy ---------------------------------------------------------------------------------


# -- precision / recall -----------------------------------------------------------------------


# -- F-beta, F1, Dice -------------------------------------------------------------------------


# -- specificity, stat scores -------------------------------------------------------------------


def binary_stat_scores(
    preds: Tensor,
    target: Tensor,
    threshold: float = 0.5,
    multidim_average: str = "global",
    ignore_index: Optional[int] = None,
    validate_args: bool = True,
) -> Tensor:
    """[tp, fp, tn, fn, support] as int64 ([N, 5] samplewise)."""
    return compute.stat_scores(binary_batch_stats(preds, target, threshold, multidim_average, ignore_index), "micro")


def multiclass_stat_scores(
    preds: Tensor,
    target: Tensor,
    num_classes: int,
    average: Optional[str] = "macro",
    top_k: int = 1,
    multidim_average: str = "global",
    ignore_index: Optional[int] = None,
    validate_args: bool = True,
) -> Tensor:
    """[tp, fp, tn, fn, support]: per class [C, 5] ("none"), summed ("micro") or averaged."""
    average = update.check_average(average)
    stats = multiclass_batch_stats(preds, target, num_classes, top_k, multidim_average, ignore_index)
    return compute.stat_scores(stats, average)


def multilabel_stat_scores(
    preds: Tensor,
    target: Tensor,
    num_labels: int,
    threshold: float = 0.5,
    average: Optional[str] = "macro",
    multidim_average: str = "global",
    ignore_index: Optional[int] = None,
    validate_args: bool = True,
) -> Tensor:
    """[tp, fp, tn, fn, support]: per label [L, 5] ("none"), summed ("micro") or averaged."""
    average = update.check_average(average)
    stats = multilabel_batch_stats(preds, target, num_labels, threshold, multidim_average, ignore_index)
    return compute.stat_scores(stats, average)


# -- confusion matrix and its metrics -----------------------------------------------------------


def stat_scores(
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
        (binary_stat_scores, multiclass_stat_scores, multilabel_stat_scores),
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
