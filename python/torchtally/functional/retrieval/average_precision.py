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

__all__ = [
    "retrieval_average_precision",
    "retrieval_fall_out",
    "retrieval_hit_rate",
    "retrieval_normalized_dcg",
    "retrieval_precision",
    "retrieval_r_precision",
    "retrieval_recall",
    "retrieval_reciprocal_rank",
]


def _one_query(
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
    return _one_query(preds, target, "map", update.check_top_k(top_k or None))


def retrieval_reciprocal_rank(preds: Tensor, target: Tensor, top_k: Optional[int] = None) -> Tensor:
    """1 / the rank of the first relevant document in the top ``top_k``; 0 without one.

    >>> import torch
    >>> from torchtally.functional.retrieval import retrieval_reciprocal_rank
    >>> retrieval_reciprocal_rank(torch.tensor([0.2, 0.3, 0.5]), torch.tensor([False, True, False]))
    tensor(0.5000)
    """
    return _one_query(preds, target, "mrr", update.check_top_k(top_k or None))


def retrieval_normalized_dcg(preds: Tensor, target: Tensor, top_k: Optional[int] = None) -> Tensor:
    """NDCG at ``top_k`` of one query (graded relevance >= 0; documents of equal score share
    their mean gain, as scikit-learn's ndcg_score); 0 where every relevance is 0.

        >>> import torch
        >>> from torchtally.functional.retrieval import retrieval_normalized_dcg
        >>> retrieval_normalized_dcg(torch.tensor([0.1, 0.2, 0.3, 4.0, 70.0]), torch.tensor([10, 0, 0, 1, 5]))
        tensor(0.6957)
    """
    return _one_query(preds, target, "ndcg", update.check_top_k(top_k))


def retrieval_precision(preds: Tensor, target: Tensor, top_k: Optional[int] = None, adaptive_k: bool = False) -> Tensor:
    """Relevant documents among the top ``top_k`` over ``top_k`` (over the query's length where
    ``top_k`` is None, or ``adaptive_k`` and ``top_k`` exceeds it).

        >>> import torch
        >>> from torchtally.functional.retrieval import retrieval_precision
        >>> retrieval_precision(torch.tensor([0.2, 0.3, 0.5]), torch.tensor([True, False, True]), top_k=2)
        tensor(0.5000)
    """
    return _one_query(
        preds, target, "precision", update.check_top_k(top_k), update.check_flag(adaptive_k, "adaptive_k")
    )


def retrieval_recall(preds: Tensor, target: Tensor, top_k: Optional[int] = None) -> Tensor:
    """Relevant documents among the top ``top_k`` over all relevant documents; 0 without one.

    >>> import torch
    >>> from torchtally.functional.retrieval import retrieval_recall
    >>> retrieval_recall(torch.tensor([0.2, 0.3, 0.5]), torch.tensor([True, False, True]), top_k=2)
    tensor(0.5000)
    """
    return _one_query(preds, target, "recall", update.check_top_k(top_k))


def retrieval_hit_rate(preds: Tensor, target: Tensor, top_k: Optional[int] = None) -> Tensor:
    """1 if a relevant document is among the top ``top_k``, else 0.

    >>> import torch
    >>> from torchtally.functional.retrieval import retrieval_hit_rate
    >>> retrieval_hit_rate(torch.tensor([0.2, 0.3, 0.5]), torch.tensor([True, False, False]), top_k=2)
    tensor(0.)
    """
    return _one_query(preds, target, "hit_rate", update.check_top_k(top_k))


def retrieval_fall_out(preds: Tensor, target: Tensor, top_k: Optional[int] = None) -> Tensor:
    """Non-relevant documents among the top ``top_k`` over all non-relevant ones; 0 without one.

    >>> import torch
    >>> from torchtally.functional.retrieval import retrieval_fall_out
    >>> retrieval_fall_out(torch.tensor([0.2, 0.3, 0.5]), torch.tensor([True, False, True]), top_k=2)
    tensor(1.)
    """
    return _one_query(preds, target, "fall_out", update.check_top_k(top_k))


def retrieval_r_precision(preds: Tensor, target: Tensor) -> Tensor:
    """With R relevant documents, the relevant ones among the top R over R; 0 without one.

    >>> import torch
    >>> from torchtally.functional.retrieval import retrieval_r_precision
    >>> retrieval_r_precision(torch.tensor([0.2, 0.3, 0.5]), torch.tensor([True, False, True]))
    tensor(0.5000)
    """
    return _one_query(preds, target, "r_precision")
