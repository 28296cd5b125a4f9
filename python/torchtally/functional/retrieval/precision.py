"""``retrieval_precision`` (torchmetrics.functional.retrieval.precision's names). Relevant
documents among the top ``top_k`` over ``top_k`` (over the query's length where ``top_k`` is
None, or ``adaptive_k`` and ``top_k`` exceeds it)."""

from typing import Optional

from torch import Tensor

from . import update
from .average_precision import one_query

__all__ = ["retrieval_precision"]


def retrieval_precision(preds: Tensor, target: Tensor, top_k: Optional[int] = None, adaptive_k: bool = False) -> Tensor:
    """Relevant documents among the top ``top_k`` over ``top_k`` (over the query's length where
    ``top_k`` is None, or ``adaptive_k`` and ``top_k`` exceeds it).

        >>> import torch
        >>> from torchtally.functional.retrieval import retrieval_precision
        >>> retrieval_precision(torch.tensor([0.2, 0.3, 0.5]), torch.tensor([True, False, True]), top_k=2)
        tensor(0.5000)
    """
    return one_query(preds, target, "precision", update.check_top_k(top_k), update.check_flag(adaptive_k, "adaptive_k"))
