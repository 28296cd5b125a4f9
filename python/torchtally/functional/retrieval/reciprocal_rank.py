"""``retrieval_reciprocal_rank`` (torchmetrics.functional.retrieval.reciprocal_rank's names). 1 /
the rank of the first relevant document in the top ``top_k``."""

from typing import Optional

from torch import Tensor

from . import update
from .average_precision import one_query

__all__ = ["retrieval_reciprocal_rank"]


def retrieval_reciprocal_rank(preds: Tensor, target: Tensor, top_k: Optional[int] = None) -> Tensor:
    """1 / the rank of the first relevant document in the top ``top_k``; 0 without one.

    >>> import torch
    >>> from torchtally.functional.retrieval import retrieval_reciprocal_rank
    >>> retrieval_reciprocal_rank(torch.tensor([0.2, 0.3, 0.5]), torch.tensor([False, True, False]))
    tensor(0.5000)
    """
    return one_query(preds, target, "mrr", update.check_top_k(top_k or None))
