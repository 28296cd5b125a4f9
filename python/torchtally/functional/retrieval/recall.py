"""``retrieval_recall`` (torchmetrics.functional.retrieval.recall's names). Relevant documents
among the top ``top_k`` over all relevant documents."""

from typing import Optional

from torch import Tensor

from . import update
from .average_precision import one_query

__all__ = ["retrieval_recall"]


def retrieval_recall(preds: Tensor, target: Tensor, top_k: Optional[int] = None) -> Tensor:
    """Relevant documents among the top ``top_k`` over all relevant documents; 0 without one.

    >>> import torch
    >>> from torchtally.functional.retrieval import retrieval_recall
    >>> retrieval_recall(torch.tensor([0.2, 0.3, 0.5]), torch.tensor([True, False, True]), top_k=2)
    tensor(0.5000)
    """
    return one_query(preds, target, "recall", update.check_top_k(top_k))
