"""The edit-distance metrics as functions: word_error_rate, char_error_rate, match_error_rate,
word_information_lost, word_information_preserved and edit_distance, with torchmetrics'
names, signatures and values (exact: the edit distance of every pair, int64 sums, float64
division; see torchtally.text's classes for the differences)."""

from typing import Any

import torch
from torch import Tensor

from . import error_counts as edit_update
from . import error_rates as edit_compute

__all__ = ["word_error_rate"]


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
