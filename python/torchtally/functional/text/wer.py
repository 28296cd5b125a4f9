"""The edit-distance metrics as functions: word_error_rate, char_error_rate, match_error_rate,
word_information_lost, word_information_preserved and edit_distance, with torchmetrics'
names, signatures and values (exact: the edit distance of every pair, int64 sums, float64
division; see torchtally.text's classes for the differences)."""

from typing import Any, Optional

import torch
from torch import Tensor

from . import error_rates as edit_compute
from . import error_counts as edit_update

__all__ = [
    "char_error_rate",
    "edit_distance",
    "match_error_rate",
    "word_error_rate",
    "word_information_lost",
    "word_information_preserved",
]


def word_error_rate(preds: Any, target: Any) -> Tensor:
    """Word error rate: the word edit distance of each (prediction, reference) pair summed, over
    the references' words (``str.split()``). A str is one sentence; lists of equal length.

        >>> from torchtally.functional.text import word_error_rate
        >>> preds = ["this is the prediction", "there is an other sample"]
        >>> target = ["this is the reference", "there is another one"]
        >>> word_error_rate(preds, target)
        tensor(0.5000)
    """
    errors, target_total, _, _ = edit_update.error_sums(preds, target, "words")
    return edit_compute.error_rate(errors, target_total, torch.get_default_dtype())


def char_error_rate(preds: Any, target: Any) -> Tensor:
    """Character error rate: the character edit distance of each pair summed, over the
    references' characters (Python str characters: Unicode code points, spaces included).

        >>> from torchtally.functional.text import char_error_rate
        >>> preds = ["this is the prediction", "there is an other sample"]
        >>> target = ["this is the reference", "there is another one"]
        >>> char_error_rate(preds, target)
        tensor(0.3415)
    """
    errors, target_total, _, _ = edit_update.error_sums(preds, target, "chars")
    return edit_compute.error_rate(errors, target_total, torch.get_default_dtype())


def match_error_rate(preds: Any, target: Any) -> Tensor:
    """Match error rate: the word edit distance of each pair summed, over the sum of each
    pair's longer side (in words), torchmetrics' definition.

        >>> from torchtally.functional.text import match_error_rate
        >>> preds = ["this is the prediction", "there is an other sample"]
        >>> target = ["this is the reference", "there is another one"]
        >>> match_error_rate(preds, target)
        tensor(0.4444)
    """
    errors, _, _, longer_total = edit_update.error_sums(preds, target, "words")
    return edit_compute.error_rate(errors, longer_total, torch.get_default_dtype())


def word_information_lost(preds: Any, target: Any) -> Tensor:
    """Word information lost: 1 - H^2 / (reference words x predicted words), H the sum over
    pairs of (the longer side's words - the edit distance), torchmetrics' definition.

        >>> from torchtally.functional.text import word_information_lost
        >>> preds = ["this is the prediction", "there is an other sample"]
        >>> target = ["this is the reference", "there is another one"]
        >>> word_information_lost(preds, target)
        tensor(0.6528)
    """
    errors, target_total, preds_total, longer_total = edit_update.error_sums(preds, target, "words")
    return edit_compute.word_info_lost(errors - longer_total, target_total, preds_total, torch.get_default_dtype())


def word_information_preserved(preds: Any, target: Any) -> Tensor:
    """Word information preserved: H^2 / (reference words x predicted words), H as in
    word_information_lost.

        >>> from torchtally.functional.text import word_information_preserved
        >>> preds = ["this is the prediction", "there is an other sample"]
        >>> target = ["this is the reference", "there is another one"]
        >>> word_information_preserved(preds, target)
        tensor(0.3472)
    """
    errors, target_total, preds_total, longer_total = edit_update.error_sums(preds, target, "words")
    return edit_compute.word_info_preserved(errors - longer_total, target_total, preds_total, torch.get_default_dtype())


def edit_distance(preds: Any, target: Any, substitution_cost: int = 1, reduction: Optional[str] = "mean") -> Tensor:
    """Character-level Levenshtein distance of each (prediction, reference) pair: insertions
    and deletions cost 1, a substitution ``substitution_cost`` (an int >= 0). ``reduction``:
    "mean" (float), "sum" (int64), None or "none" (int32 [N]); over no pairs int32 0, as
    torchmetrics. Exact for every length (torchmetrics' beam search can overestimate long pairs).

        >>> from torchtally.functional.text import edit_distance
        >>> edit_distance(["rain"], ["shine"])
        tensor(3.)
        >>> edit_distance(["rain"], ["shine"], substitution_cost=2)
        tensor(5.)
        >>> edit_distance(["rain", "lnaguaeg"], ["shine", "language"], reduction=None)
        tensor([3, 4], dtype=torch.int32)
    """
    cost = edit_update.check_substitution_cost(substitution_cost)
    reduction = edit_compute.check_reduction(reduction)
    distance = edit_update.char_distances(preds, target, cost)
    if distance.numel() == 0:
        return torch.tensor(0, dtype=torch.int32)
    if reduction is None or reduction == "none":
        return edit_update.as_int32(distance)
    count = torch.tensor(distance.numel())
    return edit_compute.edit_distance_result(distance.sum(), count, reduction, torch.get_default_dtype())
