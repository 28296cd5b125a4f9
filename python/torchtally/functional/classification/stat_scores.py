"""The per-task functional classification metrics (binary_*, multiclass_*, multilabel_*): one
batch into a fresh count state (update.py), the result from it (compute.py)."""

from typing import Optional

from torch import Tensor

from . import compute, update

_NAMES = (
    "accuracy precision recall f1_score fbeta_score specificity stat_scores hamming_distance confusion_matrix "
    "jaccard_index dice matthews_corrcoef cohen_kappa"
).split()
__all__ = [
    f"{task}_{name}"
    for name in _NAMES
    for task in ("binary", "multiclass", "multilabel")
    if not (name == "cohen_kappa" and task == "multilabel")
]


# -- the count states of one batch ---------------------------------------------------------------


def _binary_confmat(preds: Tensor, target: Tensor, threshold: float, ignore_index: Optional[int]) -> Tensor:
    threshold, ignore_index = update.check_threshold(threshold), update.check_ignore_index(ignore_index)
    return update.binary_confmat(preds, target, threshold, ignore_index)


def _multiclass_confmat(preds: Tensor, target: Tensor, num_classes: int, ignore_index: Optional[int]) -> Tensor:
    num_classes = update.check_num_classes(num_classes)
    return update.multiclass_confmat(preds, target, num_classes, update.check_ignore_index(ignore_index))


def _multilabel_confmat(
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
    return compute.binary_stats(_binary_confmat(preds, target, threshold, ignore_index))


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
    return compute.multilabel_stats(_multilabel_confmat(preds, target, num_labels, threshold, ignore_index))


# -- accuracy ---------------------------------------------------------------------------------


def binary_accuracy(
    preds: Tensor,
    target: Tensor,
    threshold: float = 0.5,
    multidim_average: str = "global",
    ignore_index: Optional[int] = None,
    validate_args: bool = True,
) -> Tensor:
    return compute.accuracy(binary_batch_stats(preds, target, threshold, multidim_average, ignore_index), "micro")


def multiclass_accuracy(
    preds: Tensor,
    target: Tensor,
    num_classes: Optional[int] = None,
    average: Optional[str] = "macro",
    top_k: int = 1,
    multidim_average: str = "global",
    ignore_index: Optional[int] = None,
    validate_args: bool = True,
) -> Tensor:
    average = update.check_average(average)
    stats = multiclass_batch_stats(preds, target, num_classes, top_k, multidim_average, ignore_index)
    return compute.accuracy(stats, average)


def multilabel_accuracy(
    preds: Tensor,
    target: Tensor,
    num_labels: int,
    threshold: float = 0.5,
    average: Optional[str] = "macro",
    multidim_average: str = "global",
    ignore_index: Optional[int] = None,
    validate_args: bool = True,
) -> Tensor:
    average = update.check_average(average)
    stats = multilabel_batch_stats(preds, target, num_labels, threshold, multidim_average, ignore_index)
    return compute.accuracy(stats, average)


# -- precision / recall -----------------------------------------------------------------------


def binary_precision(
    preds: Tensor,
    target: Tensor,
    threshold: float = 0.5,
    multidim_average: str = "global",
    ignore_index: Optional[int] = None,
    validate_args: bool = True,
    zero_division: float = 0,
) -> Tensor:
    zero_division = update.check_zero_division(zero_division)
    stats = binary_batch_stats(preds, target, threshold, multidim_average, ignore_index)
    return compute.precision(stats, "micro", zero_division)


def multiclass_precision(
    preds: Tensor,
    target: Tensor,
    num_classes: int,
    average: Optional[str] = "macro",
    top_k: int = 1,
    multidim_average: str = "global",
    ignore_index: Optional[int] = None,
    validate_args: bool = True,
    zero_division: float = 0,
) -> Tensor:
    average, zero_division = update.check_average(average), update.check_zero_division(zero_division)
    stats = multiclass_batch_stats(preds, target, num_classes, top_k, multidim_average, ignore_index)
    return compute.precision(stats, average, zero_division)


def multilabel_precision(
    preds: Tensor,
    target: Tensor,
    num_labels: int,
    threshold: float = 0.5,
    average: Optional[str] = "macro",
    multidim_average: str = "global",
    ignore_index: Optional[int] = None,
    validate_args: bool = True,
    zero_division: float = 0,
) -> Tensor:
    average, zero_division = update.check_average(average), update.check_zero_division(zero_division)
    stats = multilabel_batch_stats(preds, target, num_labels, threshold, multidim_average, ignore_index)
    return compute.precision(stats, average, zero_division)


def binary_recall(
    preds: Tensor,
    target: Tensor,
    threshold: float = 0.5,
    multidim_average: str = "global",
    ignore_index: Optional[int] = None,
    validate_args: bool = True,
    zero_division: float = 0,
) -> Tensor:
    zero_division = update.check_zero_division(zero_division)
    stats = binary_batch_stats(preds, target, threshold, multidim_average, ignore_index)
    return compute.recall(stats, "micro", zero_division)


def multiclass_recall(
    preds: Tensor,
    target: Tensor,
    num_classes: int,
    average: Optional[str] = "macro",
    top_k: int = 1,
    multidim_average: str = "global",
    ignore_index: Optional[int] = None,
    validate_args: bool = True,
    zero_division: float = 0,
) -> Tensor:
    average, zero_division = update.check_average(average), update.check_zero_division(zero_division)
    stats = multiclass_batch_stats(preds, target, num_classes, top_k, multidim_average, ignore_index)
    return compute.recall(stats, average, zero_division)


def multilabel_recall(
    preds: Tensor,
    target: Tensor,
    num_labels: int,
    threshold: float = 0.5,
    average: Optional[str] = "macro",
    multidim_average: str = "global",
    ignore_index: Optional[int] = None,
    validate_args: bool = True,
    zero_division: float = 0,
) -> Tensor:
    average, zero_division = update.check_average(average), update.check_zero_division(zero_division)
    stats = multilabel_batch_stats(preds, target, num_labels, threshold, multidim_average, ignore_index)
    return compute.recall(stats, average, zero_division)


# -- F-beta, F1, Dice -------------------------------------------------------------------------


def binary_fbeta_score(
    preds: Tensor,
    target: Tensor,
    beta: float,
    threshold: float = 0.5,
    multidim_average: str = "global",
    ignore_index: Optional[int] = None,
    validate_args: bool = True,
    zero_division: float = 0,
) -> Tensor:
    beta, zero_division = update.check_beta(beta), update.check_zero_division(zero_division)
    stats = binary_batch_stats(preds, target, threshold, multidim_average, ignore_index)
    return compute.fbeta(stats, beta, "micro", zero_division)


def multiclass_fbeta_score(
    preds: Tensor,
    target: Tensor,
    beta: float,
    num_classes: int,
    average: Optional[str] = "macro",
    top_k: int = 1,
    multidim_average: str = "global",
    ignore_index: Optional[int] = None,
    validate_args: bool = True,
    zero_division: float = 0,
) -> Tensor:
    beta, zero_division = update.check_beta(beta), update.check_zero_division(zero_division)
    average = update.check_average(average)
    stats = multiclass_batch_stats(preds, target, num_classes, top_k, multidim_average, ignore_index)
    return compute.fbeta(stats, beta, average, zero_division)


def multilabel_fbeta_score(
    preds: Tensor,
    target: Tensor,
    beta: float,
    num_labels: int,
    threshold: float = 0.5,
    average: Optional[str] = "macro",
    multidim_average: str = "global",
    ignore_index: Optional[int] = None,
    validate_args: bool = True,
    zero_division: float = 0,
) -> Tensor:
    beta, zero_division = update.check_beta(beta), update.check_zero_division(zero_division)
    average = update.check_average(average)
    stats = multilabel_batch_stats(preds, target, num_labels, threshold, multidim_average, ignore_index)
    return compute.fbeta(stats, beta, average, zero_division)


def binary_f1_score(
    preds: Tensor,
    target: Tensor,
    threshold: float = 0.5,
    multidim_average: str = "global",
    ignore_index: Optional[int] = None,
    validate_args: bool = True,
    zero_division: float = 0,
) -> Tensor:
    return binary_fbeta_score(
        preds, target, 1.0, threshold, multidim_average, ignore_index, validate_args, zero_division
    )


def multiclass_f1_score(
    preds: Tensor,
    target: Tensor,
    num_classes: int,
    average: Optional[str] = "macro",
    top_k: int = 1,
    multidim_average: str = "global",
    ignore_index: Optional[int] = None,
    validate_args: bool = True,
    zero_division: float = 0,
) -> Tensor:
    return multiclass_fbeta_score(
        preds, target, 1.0, num_classes, average, top_k, multidim_average, ignore_index, validate_args, zero_division
    )


def multilabel_f1_score(
    preds: Tensor,
    target: Tensor,
    num_labels: int,
    threshold: float = 0.5,
    average: Optional[str] = "macro",
    multidim_average: str = "global",
    ignore_index: Optional[int] = None,
    validate_args: bool = True,
    zero_division: float = 0,
) -> Tensor:
    return multilabel_fbeta_score(
        preds, target, 1.0, num_labels, threshold, average, multidim_average, ignore_index, validate_args, zero_division
    )


# Dice = 2 tp / (2 tp + fp + fn): the F1 score under another name (torchtally's; torchmetrics 1.9
# has no classification dice).
binary_dice = binary_f1_score
multiclass_dice = multiclass_f1_score
multilabel_dice = multilabel_f1_score


# -- specificity, stat scores -------------------------------------------------------------------


def binary_specificity(
    preds: Tensor,
    target: Tensor,
    threshold: float = 0.5,
    multidim_average: str = "global",
    ignore_index: Optional[int] = None,
    validate_args: bool = True,
) -> Tensor:
    return compute.specificity(binary_batch_stats(preds, target, threshold, multidim_average, ignore_index), "micro")


def multiclass_specificity(
    preds: Tensor,
    target: Tensor,
    num_classes: int,
    average: Optional[str] = "macro",
    top_k: int = 1,
    multidim_average: str = "global",
    ignore_index: Optional[int] = None,
    validate_args: bool = True,
) -> Tensor:
    average = update.check_average(average)
    stats = multiclass_batch_stats(preds, target, num_classes, top_k, multidim_average, ignore_index)
    return compute.specificity(stats, average)


def multilabel_specificity(
    preds: Tensor,
    target: Tensor,
    num_labels: int,
    threshold: float = 0.5,
    average: Optional[str] = "macro",
    multidim_average: str = "global",
    ignore_index: Optional[int] = None,
    validate_args: bool = True,
) -> Tensor:
    average = update.check_average(average)
    stats = multilabel_batch_stats(preds, target, num_labels, threshold, multidim_average, ignore_index)
    return compute.specificity(stats, average)


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


# -- confusion matrix and its metrics -----------------------------------------------------------


def binary_confusion_matrix(
    preds: Tensor,
    target: Tensor,
    threshold: float = 0.5,
    normalize: Optional[str] = None,
    ignore_index: Optional[int] = None,
    validate_args: bool = True,
) -> Tensor:
    """[2, 2], row = target, column = prediction; int64, or float32 when normalised."""
    normalize = update.check_normalize(normalize)
    return compute.confusion_matrix(_binary_confmat(preds, target, threshold, ignore_index), normalize)


def multiclass_confusion_matrix(
    preds: Tensor,
    target: Tensor,
    num_classes: int,
    normalize: Optional[str] = None,
    ignore_index: Optional[int] = None,
    validate_args: bool = True,
) -> Tensor:
    """[C, C], row = target, column = prediction; int64, or float32 when normalised."""
    normalize = update.check_normalize(normalize)
    return compute.confusion_matrix(_multiclass_confmat(preds, target, num_classes, ignore_index), normalize)


def multilabel_confusion_matrix(
    preds: Tensor,
    target: Tensor,
    num_labels: int,
    threshold: float = 0.5,
    normalize: Optional[str] = None,
    ignore_index: Optional[int] = None,
    validate_args: bool = True,
) -> Tensor:
    """[L, 2, 2]: per label, row = target, column = prediction; int64, or float32 when normalised."""
    normalize = update.check_normalize(normalize)
    return compute.confusion_matrix(_multilabel_confmat(preds, target, num_labels, threshold, ignore_index), normalize)


def binary_jaccard_index(
    preds: Tensor,
    target: Tensor,
    threshold: float = 0.5,
    ignore_index: Optional[int] = None,
    validate_args: bool = True,
    zero_division: float = 0.0,
) -> Tensor:
    zero_division = update.check_zero_division(zero_division)
    return compute.jaccard_index(
        _binary_confmat(preds, target, threshold, ignore_index), "binary", "micro", zero_division=zero_division
    )


def multiclass_jaccard_index(
    preds: Tensor,
    target: Tensor,
    num_classes: int,
    average: Optional[str] = "macro",
    ignore_index: Optional[int] = None,
    validate_args: bool = True,
    zero_division: float = 0.0,
) -> Tensor:
    average, zero_division = update.check_average(average), update.check_zero_division(zero_division)
    confmat = _multiclass_confmat(preds, target, num_classes, ignore_index)
    return compute.jaccard_index(confmat, "multiclass", average, ignore_index, zero_division)


def multilabel_jaccard_index(
    preds: Tensor,
    target: Tensor,
    num_labels: int,
    threshold: float = 0.5,
    average: Optional[str] = "macro",
    ignore_index: Optional[int] = None,
    validate_args: bool = True,
    zero_division: float = 0.0,
) -> Tensor:
    average, zero_division = update.check_average(average), update.check_zero_division(zero_division)
    confmat = _multilabel_confmat(preds, target, num_labels, threshold, ignore_index)
    return compute.jaccard_index(confmat, "multilabel", average, zero_division=zero_division)


def binary_matthews_corrcoef(
    preds: Tensor,
    target: Tensor,
    threshold: float = 0.5,
    ignore_index: Optional[int] = None,
    validate_args: bool = True,
) -> Tensor:
    return compute.matthews_corrcoef(_binary_confmat(preds, target, threshold, ignore_index))


def multiclass_matthews_corrcoef(
    preds: Tensor, target: Tensor, num_classes: int, ignore_index: Optional[int] = None, validate_args: bool = True
) -> Tensor:
    return compute.matthews_corrcoef(_multiclass_confmat(preds, target, num_classes, ignore_index))


def multilabel_matthews_corrcoef(
    preds: Tensor,
    target: Tensor,
    num_labels: int,
    threshold: float = 0.5,
    ignore_index: Optional[int] = None,
    validate_args: bool = True,
) -> Tensor:
    """Matthews' correlation of all labels' elements pooled (as torchmetrics)."""
    return compute.matthews_corrcoef(_multilabel_confmat(preds, target, num_labels, threshold, ignore_index))


def binary_cohen_kappa(
    preds: Tensor,
    target: Tensor,
    threshold: float = 0.5,
    weights: Optional[str] = None,
    ignore_index: Optional[int] = None,
    validate_args: bool = True,
) -> Tensor:
    weights = update.check_kappa_weights(weights)
    return compute.cohen_kappa(_binary_confmat(preds, target, threshold, ignore_index), weights)


def multiclass_cohen_kappa(
    preds: Tensor,
    target: Tensor,
    num_classes: int,
    weights: Optional[str] = None,
    ignore_index: Optional[int] = None,
    validate_args: bool = True,
) -> Tensor:
    weights = update.check_kappa_weights(weights)
    return compute.cohen_kappa(_multiclass_confmat(preds, target, num_classes, ignore_index), weights)
