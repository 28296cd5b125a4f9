"""``cosine_similarity`` (torchmetrics.functional.regression.cosine_similarity's names). Cosine
similarity of each row of [N, d] preds with the same row of target, reduced by ``reduction``."""

from typing import Optional

import torch
from torch import Tensor

from . import update

__all__ = ["cosine_similarity"]


def cosine_similarity(preds: Tensor, target: Tensor, reduction: Optional[str] = "sum") -> Tensor:
    """Cosine similarity of each row of [N, d] preds with the same row of target, reduced by
    ``reduction``: "sum" (default, as torchmetrics), "mean", or "none"/None (one value per
    row). float32, as torchmetrics.

        >>> cosine_similarity(torch.tensor([[1.0, 0.0], [1.0, 1.0]]), torch.tensor([[1.0, 0.0], [0.0, 1.0]]))
        tensor(1.7071)
    """
    reduction = update.check_cosine_reduction(reduction)
    sims = update.cosine_rows(preds, target)
    if reduction == "sum":
        sims = sims.sum()
    elif reduction == "mean":
        sims = sims.mean()
    return sims.to(torch.float32)
