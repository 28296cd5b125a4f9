"""``match_error_rate`` (torchmetrics.functional.text.mer's names). Match error rate."""

from typing import Any

import torch
from torch import Tensor

from . import error_counts as edit_update
from . import error_rates as edit_compute

__all__ = ["match_error_rate"]


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
