"""``word_information_lost`` (torchmetrics.functional.text.wil's names). Word information lost."""

from typing import Any

import torch
from torch import Tensor

from . import error_counts as edit_update
from . import error_rates as edit_compute

__all__ = ["word_information_lost"]


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
