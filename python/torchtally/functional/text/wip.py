"""``word_information_preserved`` (torchmetrics.functional.text.wip's names). Word information
preserved."""

from typing import Any

import torch
from torch import Tensor

from . import error_counts as edit_update
from . import error_rates as edit_compute

__all__ = ["word_information_preserved"]


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
