"""``edit_distance`` (torchmetrics.functional.text.edit's names). Character-level Levenshtein
distance of each (prediction, reference) pair."""

from typing import Any, Optional

import torch
from torch import Tensor

from . import error_counts as edit_update
from . import error_rates as edit_compute

__all__ = ["edit_distance"]


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
