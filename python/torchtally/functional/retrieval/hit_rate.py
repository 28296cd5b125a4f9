"""``retrieval_hit_rate`` (torchmetrics.functional.retrieval.hit_rate's names). 1 if a relevant
document is among the top ``top_k``, else 0."""

from typing import Optional

from torch import Tensor

from . import update
from .average_precision import one_query

__all__ = ["retrieval_hit_rate"]


def retrieval_hit_rate(preds: Tensor, target: Tensor, top_k: Optional[int] = None) -> Tensor:
    """1 if a relevant document is among the top ``top_k``, else 0.

    >>> import torch
    >>> from torchtally.functional.retrieval import retrieval_hit_rate
    >>> retrieval_hit_rate(torch.tensor([0.2, 0.3, 0.5]), torch.tensor([True, False, False]), top_k=2)
    tensor(0.)
    """
    return one_query(preds, target, "hit_rate", update.check_top_k(top_k))
