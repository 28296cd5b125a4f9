"""Retrieval: the public per-query functions (torchmetrics.functional.retrieval's names and
signatures). Each takes one query's scores ``preds`` and relevances ``target`` (one shape, any
number of dims, flattened) and returns its value as a float32 0-d tensor on preds' device,
computed by the kernel the classes use (csrc/kernels/retrieval.c): documents of equal score
ranked least relevant first (torchmetrics: its sort's, unspecified, order; see compute.py).
``top_k=0`` means every document for average precision, reciprocal rank and AUROC, as in
torchmetrics (the other forms refuse it, as torchmetrics does). Inputs are
checked as the classes check them (update.py): NaN scores and a non-binary target (NDCG: a
negative or infinite relevance) are a ValueError, as are no documents (as torchmetrics).
"""

from typing import Optional

import torch
from torch import Tensor

from . import compute, update

__all__ = ["retrieval_average_precision"]


def one_query(
    preds: Tensor, target: Tensor, metric: str, top_k: Optional[int] = None, adaptive_k: bool = False
) -> Tensor:
    scores, relevance = update.check_scores_and_relevance(preds, target, metric == "ndcg")
    if scores.numel() == 0 or preds.dim() == 0:
        raise ValueError(
            "preds: expected a tensor of at least one document "
            "(`preds` and `target` must be non-empty and non-scalar tensors)"
        )
    query = torch.zeros(scores.shape[0], dtype=torch.int64)
    rel = relevance.to(torch.float32 if metric == "ndcg" else torch.bool)
    values, _, _ = compute.score_queries(query, scores.float(), rel, metric, top_k, adaptive_k)
    return values[0].to(device=scores.device, dtype=torch.float32)


def retrieval_average_precision(preds: Tensor, target: Tensor, top_k: Optional[int] = None) -> Tensor:
    """Average precision of one query: the mean over its relevant documents in the top ``top_k``
    (None: all) of the precision at each one's rank; 0 without one. A relevant document scored
    <= 0 counts as not retrieved (as torchmetrics).

        >>> import torch
        >>> from torchtally.functional.retrieval import retrieval_average_precision
        >>> retrieval_average_precision(torch.tensor([0.2, 0.3, 0.5]), torch.tensor([True, False, True]))
        tensor(0.8333)
    """
    return one_query(preds, target, "map", update.check_top_k(top_k or None))
