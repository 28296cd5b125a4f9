"""Functional classification metrics: one batch in, the metric out.

Each function accumulates the batch into a fresh count state with the same kernels and checks
as the metric classes (torchtally.metrics.classification) and computes the same result from
it. Inputs (labels, probabilities or logits, extra dims) and averaging follow torchmetrics;
see `_classification_inputs` and `_classification_reduce` for the exact rules.

    >>> import torch
    >>> from torchtally.functional import multiclass_accuracy, binary_f1_score
    >>> preds = torch.tensor([[0.1, 0.8, 0.1], [0.7, 0.2, 0.1], [0.2, 0.3, 0.5], [0.6, 0.3, 0.1]])
    >>> target = torch.tensor([1, 0, 2, 2])
    >>> multiclass_accuracy(preds, target, 3, average="micro")
    tensor(0.7500)
    >>> binary_f1_score(torch.tensor([0.9, -2.0, 3.0]), torch.tensor([1, 0, 0]))  # logits
    tensor(0.6667)
"""
from typing import Optional

from torch import Tensor

from . import _classification_inputs as _in
from . import _classification_reduce as _r

__all__ = [
    f"{task}_{name}"
    for name in ("accuracy", "precision", "recall", "f1_score", "fbeta_score", "specificity", "stat_scores",
                 "confusion_matrix", "jaccard_index", "dice", "matthews_corrcoef", "cohen_kappa")
    for task in ("binary", "multiclass", "multilabel")
    if not (name == "cohen_kappa" and task == "multilabel")
]


def _binary(preds: Tensor, target: Tensor, threshold: float, ignore_index: Optional[int]) -> Tensor:
    return _in.binary_confmat(preds, target, _in.check_threshold(threshold), _in.check_ignore_index(ignore_index))


def _multiclass(preds: Tensor, target: Tensor, num_classes: int, ignore_index: Optional[int]) -> Tensor:
    num_classes = _in.check_count("num_classes", num_classes)
    return _in.multiclass_confmat(preds, target, num_classes, _in.check_ignore_index(ignore_index))


def _multilabel(preds: Tensor, target: Tensor, num_labels: int, threshold: float,
                ignore_index: Optional[int]) -> Tensor:
    num_labels = _in.check_count("num_labels", num_labels)
    return _in.multilabel_confmat(preds, target, num_labels, _in.check_threshold(threshold),
                                  _in.check_ignore_index(ignore_index))


def _multiclass_stats(preds, target, num_classes, ignore_index, top_k: int = 1) -> _r.Stats:
    num_classes = _in.check_count("num_classes", num_classes)
    top_k = _in.check_top_k(top_k, num_classes)
    if top_k == 1:
        return _r.multiclass_stats(_multiclass(preds, target, num_classes, ignore_index))
    state = _in.multiclass_topk(preds, target, num_classes, _in.check_ignore_index(ignore_index), top_k)
    return _r.topk_stats(state)


def _binary_stats(preds, target, threshold, ignore_index) -> _r.Stats:
    return _r.binary_stats(_binary(preds, target, threshold, ignore_index))


def _multilabel_stats(preds, target, num_labels, threshold, ignore_index) -> _r.Stats:
    return _r.multilabel_stats(_multilabel(preds, target, num_labels, threshold, ignore_index))


# -- accuracy ---------------------------------------------------------------------------------


def binary_accuracy(preds: Tensor, target: Tensor, *, threshold: float = 0.5,
                    ignore_index: Optional[int] = None) -> Tensor:
    return _r.accuracy(_binary_stats(preds, target, threshold, ignore_index), "micro")


def multiclass_accuracy(preds: Tensor, target: Tensor, num_classes: int, *, average: Optional[str] = "macro",
                        top_k: int = 1, ignore_index: Optional[int] = None) -> Tensor:
    average = _in.check_average(average)
    return _r.accuracy(_multiclass_stats(preds, target, num_classes, ignore_index, top_k), average)


def multilabel_accuracy(preds: Tensor, target: Tensor, num_labels: int, *, threshold: float = 0.5,
                        average: Optional[str] = "macro", ignore_index: Optional[int] = None) -> Tensor:
    average = _in.check_average(average)
    return _r.accuracy(_multilabel_stats(preds, target, num_labels, threshold, ignore_index), average)


# -- precision / recall -----------------------------------------------------------------------


def binary_precision(preds: Tensor, target: Tensor, *, threshold: float = 0.5, ignore_index: Optional[int] = None,
                     zero_division: float = 0) -> Tensor:
    zero_division = _in.check_zero_division(zero_division)
    return _r.precision(_binary_stats(preds, target, threshold, ignore_index), "micro", zero_division)


def multiclass_precision(preds: Tensor, target: Tensor, num_classes: int, *, average: Optional[str] = "macro",
                         ignore_index: Optional[int] = None, zero_division: float = 0) -> Tensor:
    average, zero_division = _in.check_average(average), _in.check_zero_division(zero_division)
    return _r.precision(_multiclass_stats(preds, target, num_classes, ignore_index), average, zero_division)


def multilabel_precision(preds: Tensor, target: Tensor, num_labels: int, *, threshold: float = 0.5,
                         average: Optional[str] = "macro", ignore_index: Optional[int] = None,
                         zero_division: float = 0) -> Tensor:
    average, zero_division = _in.check_average(average), _in.check_zero_division(zero_division)
    stats = _multilabel_stats(preds, target, num_labels, threshold, ignore_index)
    return _r.precision(stats, average, zero_division)


def binary_recall(preds: Tensor, target: Tensor, *, threshold: float = 0.5, ignore_index: Optional[int] = None,
                  zero_division: float = 0) -> Tensor:
    zero_division = _in.check_zero_division(zero_division)
    return _r.recall(_binary_stats(preds, target, threshold, ignore_index), "micro", zero_division)


def multiclass_recall(preds: Tensor, target: Tensor, num_classes: int, *, average: Optional[str] = "macro",
                      top_k: int = 1, ignore_index: Optional[int] = None, zero_division: float = 0) -> Tensor:
    average, zero_division = _in.check_average(average), _in.check_zero_division(zero_division)
    return _r.recall(_multiclass_stats(preds, target, num_classes, ignore_index, top_k), average, zero_division)


def multilabel_recall(preds: Tensor, target: Tensor, num_labels: int, *, threshold: float = 0.5,
                      average: Optional[str] = "macro", ignore_index: Optional[int] = None,
                      zero_division: float = 0) -> Tensor:
    average, zero_division = _in.check_average(average), _in.check_zero_division(zero_division)
    return _r.recall(_multilabel_stats(preds, target, num_labels, threshold, ignore_index), average, zero_division)


# -- F-beta, F1, Dice -------------------------------------------------------------------------


def binary_fbeta_score(preds: Tensor, target: Tensor, beta: float, *, threshold: float = 0.5,
                       ignore_index: Optional[int] = None, zero_division: float = 0) -> Tensor:
    beta, zero_division = _in.check_beta(beta), _in.check_zero_division(zero_division)
    return _r.fbeta(_binary_stats(preds, target, threshold, ignore_index), beta, "micro", zero_division)


def multiclass_fbeta_score(preds: Tensor, target: Tensor, beta: float, num_classes: int, *,
                           average: Optional[str] = "macro", ignore_index: Optional[int] = None,
                           zero_division: float = 0) -> Tensor:
    beta, zero_division = _in.check_beta(beta), _in.check_zero_division(zero_division)
    average = _in.check_average(average)
    return _r.fbeta(_multiclass_stats(preds, target, num_classes, ignore_index), beta, average, zero_division)


def multilabel_fbeta_score(preds: Tensor, target: Tensor, beta: float, num_labels: int, *, threshold: float = 0.5,
                           average: Optional[str] = "macro", ignore_index: Optional[int] = None,
                           zero_division: float = 0) -> Tensor:
    beta, zero_division = _in.check_beta(beta), _in.check_zero_division(zero_division)
    average = _in.check_average(average)
    stats = _multilabel_stats(preds, target, num_labels, threshold, ignore_index)
    return _r.fbeta(stats, beta, average, zero_division)


def binary_f1_score(preds: Tensor, target: Tensor, *, threshold: float = 0.5, ignore_index: Optional[int] = None,
                    zero_division: float = 0) -> Tensor:
    return binary_fbeta_score(preds, target, 1.0, threshold=threshold, ignore_index=ignore_index,
                              zero_division=zero_division)


def multiclass_f1_score(preds: Tensor, target: Tensor, num_classes: int, *, average: Optional[str] = "macro",
                        ignore_index: Optional[int] = None, zero_division: float = 0) -> Tensor:
    return multiclass_fbeta_score(preds, target, 1.0, num_classes, average=average, ignore_index=ignore_index,
                                  zero_division=zero_division)


def multilabel_f1_score(preds: Tensor, target: Tensor, num_labels: int, *, threshold: float = 0.5,
                        average: Optional[str] = "macro", ignore_index: Optional[int] = None,
                        zero_division: float = 0) -> Tensor:
    return multilabel_fbeta_score(preds, target, 1.0, num_labels, threshold=threshold, average=average,
                                  ignore_index=ignore_index, zero_division=zero_division)


# Dice = 2 tp / (2 tp + fp + fn): the F1 score under another name (same averaging).
binary_dice = binary_f1_score
multiclass_dice = multiclass_f1_score
multilabel_dice = multilabel_f1_score


# -- specificity, stat scores -------------------------------------------------------------------


def binary_specificity(preds: Tensor, target: Tensor, *, threshold: float = 0.5,
                       ignore_index: Optional[int] = None) -> Tensor:
    return _r.specificity(_binary_stats(preds, target, threshold, ignore_index), "micro")


def multiclass_specificity(preds: Tensor, target: Tensor, num_classes: int, *, average: Optional[str] = "macro",
                           ignore_index: Optional[int] = None) -> Tensor:
    average = _in.check_average(average)
    return _r.specificity(_multiclass_stats(preds, target, num_classes, ignore_index), average)


def multilabel_specificity(preds: Tensor, target: Tensor, num_labels: int, *, threshold: float = 0.5,
                           average: Optional[str] = "macro", ignore_index: Optional[int] = None) -> Tensor:
    average = _in.check_average(average)
    return _r.specificity(_multilabel_stats(preds, target, num_labels, threshold, ignore_index), average)


def binary_stat_scores(preds: Tensor, target: Tensor, *, threshold: float = 0.5,
                       ignore_index: Optional[int] = None) -> Tensor:
    """[tp, fp, tn, fn, support] as int64."""
    return _r.stat_scores(_binary_stats(preds, target, threshold, ignore_index), "micro")


def multiclass_stat_scores(preds: Tensor, target: Tensor, num_classes: int, *, average: Optional[str] = "macro",
                           ignore_index: Optional[int] = None) -> Tensor:
    """[tp, fp, tn, fn, support]: per class [C, 5] ("none"), summed ("micro") or averaged."""
    average = _in.check_average(average)
    return _r.stat_scores(_multiclass_stats(preds, target, num_classes, ignore_index), average)


def multilabel_stat_scores(preds: Tensor, target: Tensor, num_labels: int, *, threshold: float = 0.5,
                           average: Optional[str] = "macro", ignore_index: Optional[int] = None) -> Tensor:
    """[tp, fp, tn, fn, support]: per label [L, 5] ("none"), summed ("micro") or averaged."""
    average = _in.check_average(average)
    return _r.stat_scores(_multilabel_stats(preds, target, num_labels, threshold, ignore_index), average)


# -- confusion matrix and its metrics -----------------------------------------------------------


def binary_confusion_matrix(preds: Tensor, target: Tensor, *, threshold: float = 0.5,
                            ignore_index: Optional[int] = None, normalize: Optional[str] = None) -> Tensor:
    """[2, 2], row = target, column = prediction; int64, or float32 when normalised."""
    normalize = _in.check_normalize(normalize)
    return _r.confusion_matrix(_binary(preds, target, threshold, ignore_index), normalize)


def multiclass_confusion_matrix(preds: Tensor, target: Tensor, num_classes: int, *,
                                ignore_index: Optional[int] = None, normalize: Optional[str] = None) -> Tensor:
    """[C, C], row = target, column = prediction; int64, or float32 when normalised."""
    normalize = _in.check_normalize(normalize)
    return _r.confusion_matrix(_multiclass(preds, target, num_classes, ignore_index), normalize)


def multilabel_confusion_matrix(preds: Tensor, target: Tensor, num_labels: int, *, threshold: float = 0.5,
                                ignore_index: Optional[int] = None, normalize: Optional[str] = None) -> Tensor:
    """[L, 2, 2]: per label, row = target, column = prediction; int64, or float32 when normalised."""
    normalize = _in.check_normalize(normalize)
    return _r.confusion_matrix(_multilabel(preds, target, num_labels, threshold, ignore_index), normalize)


def binary_jaccard_index(preds: Tensor, target: Tensor, *, threshold: float = 0.5,
                         ignore_index: Optional[int] = None, zero_division: float = 0) -> Tensor:
    zero_division = _in.check_zero_division(zero_division)
    return _r.jaccard_index(_binary(preds, target, threshold, ignore_index), "binary", "micro",
                            zero_division=zero_division)


def multiclass_jaccard_index(preds: Tensor, target: Tensor, num_classes: int, *, average: Optional[str] = "macro",
                             ignore_index: Optional[int] = None, zero_division: float = 0) -> Tensor:
    average, zero_division = _in.check_average(average), _in.check_zero_division(zero_division)
    confmat = _multiclass(preds, target, num_classes, ignore_index)
    return _r.jaccard_index(confmat, "multiclass", average, ignore_index, zero_division)


def multilabel_jaccard_index(preds: Tensor, target: Tensor, num_labels: int, *, threshold: float = 0.5,
                             average: Optional[str] = "macro", ignore_index: Optional[int] = None,
                             zero_division: float = 0) -> Tensor:
    average, zero_division = _in.check_average(average), _in.check_zero_division(zero_division)
    confmat = _multilabel(preds, target, num_labels, threshold, ignore_index)
    return _r.jaccard_index(confmat, "multilabel", average, zero_division=zero_division)


def binary_matthews_corrcoef(preds: Tensor, target: Tensor, *, threshold: float = 0.5,
                             ignore_index: Optional[int] = None) -> Tensor:
    return _r.matthews_corrcoef(_binary(preds, target, threshold, ignore_index))


def multiclass_matthews_corrcoef(preds: Tensor, target: Tensor, num_classes: int, *,
                                 ignore_index: Optional[int] = None) -> Tensor:
    return _r.matthews_corrcoef(_multiclass(preds, target, num_classes, ignore_index))


def multilabel_matthews_corrcoef(preds: Tensor, target: Tensor, num_labels: int, *, threshold: float = 0.5,
                                 ignore_index: Optional[int] = None) -> Tensor:
    """Matthews' correlation of all labels' elements pooled (as torchmetrics)."""
    return _r.matthews_corrcoef(_multilabel(preds, target, num_labels, threshold, ignore_index))


def binary_cohen_kappa(preds: Tensor, target: Tensor, *, threshold: float = 0.5, ignore_index: Optional[int] = None,
                       weights: Optional[str] = None) -> Tensor:
    weights = _in.check_kappa_weights(weights)
    return _r.cohen_kappa(_binary(preds, target, threshold, ignore_index), weights)


def multiclass_cohen_kappa(preds: Tensor, target: Tensor, num_classes: int, *, ignore_index: Optional[int] = None,
                           weights: Optional[str] = None) -> Tensor:
    weights = _in.check_kappa_weights(weights)
    return _r.cohen_kappa(_multiclass(preds, target, num_classes, ignore_index), weights)
