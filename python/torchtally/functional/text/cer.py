"""``char_error_rate`` (torchmetrics.functional.text.cer's names). Character error rate."""

from typing import Any

import torch
from torch import Tensor

from . import error_counts as edit_update
from . import error_rates as edit_compute

__all__ = ["char_error_rate"]


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
