"""``retrieval_fall_out`` (torchmetrics.functional.retrieval.fall_out's names). Non-relevant
documents among the top ``top_k`` over all non-relevant ones."""

from typing import Optional

from torch import Tensor

from . import update
from .average_precision import one_query

__all__ = ["retrieval_fall_out"]


def retrieval_fall_out(preds: Tensor, target: Tensor, top_k: Optional[int] = None) -> Tensor:
    """Non-relevant documents among the top ``top_k`` over all non-relevant ones; 0 without one.

    >>> import torch
    >>> from torchtally.functional.retrieval import retrieval_fall_out
    >>> retrieval_fall_out(torch.tensor([0.2, 0.3, 0.5]), torch.tensor([True, False, True]), top_k=2)
    tensor(1.)
    """
    return one_query(preds, target, "fall_out", update.check_top_k(top_k))
