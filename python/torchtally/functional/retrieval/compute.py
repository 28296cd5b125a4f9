"""Retrieval: per-query values from the documents, and the metric's result from them.

``score_queries`` groups the documents by query and orders each query by score, descending,
documents of equal score by relevance, ascending (csrc/kernels/retrieval_order.c: radix by
query id, then merge by (score, relevance); the reference: three stable torch sorts). The order
depends on the documents alone, never on where they were stored, so W ranks give exactly what
one process gives over the whole data, whatever the split and the batching.
The kernel (csrc/kernels/retrieval.c) then walks each query once. O(N log n) time for N
documents in queries of up to n, O(N) memory: nothing is sized by the largest query id
(torchmetrics' bincount allocates max(indexes) + 1 counters).

Ties: torchmetrics orders documents of equal score by torch's sort, whose order for ties is
unspecified (its CPU sort is not stable beyond 16 elements), so its values for MAP, MRR,
precision@k, recall@k, hit rate@k, fall-out@k and R-precision depend on that accident when a
tie mixes relevant and non-relevant documents. torchtally ranks a tie's least relevant
documents first: the values depend on the documents only, never on their storage order;
NDCG averages over ties (as torchmetrics and scikit-learn), so it does not depend on an order.
"""

from typing import Optional, Tuple

import torch
from torch import Tensor

from ...kernels import retrieval as kernel
from .update import Aggregation


def metric_code(name: str) -> int:
    return kernel.METRICS.index(name)


def group_documents(query: Tensor, score: Tensor, relevance: Tensor) -> Tuple[Tensor, Tensor, Tensor]:
    """The documents ordered by (query id, score descending, relevance): query int64, score
    float32 and relevance float32 (on the host: the kernel is the C core's)."""
    n = query.shape[0]
    ordered = (
        torch.empty(n, dtype=torch.int64),
        torch.empty(n, dtype=torch.float32),
        torch.empty(n, dtype=torch.float32),
    )
    kernel.retrieval_order(*ordered, query, score, relevance)
    return ordered


def score_queries(
    query: Tensor, score: Tensor, relevance: Tensor, metric: str, top_k: Optional[int] = None, adaptive_k: bool = False
) -> Tuple[Tensor, Tensor, Tensor]:
    """(values float64 [Q], empty bool [Q], query ids int64 [Q]) over the Q distinct queries in
    id order; ``empty``: the query has no positive document (fall-out: no negative one)."""
    host = torch.device("cpu")
    query, score, relevance = group_documents(query.to(host), score.to(host), relevance.to(host))
    ids = torch.unique_consecutive(query)  # grouped by query: one id per run (a bool mask costs 5x)
    out = torch.empty(ids.shape[0], 2, dtype=torch.float64)
    kernel.retrieval_scores(out, query, score, relevance, metric_code(metric), top_k or 0, adaptive_k)
    return out[:, 0], out[:, 1] != 0, ids


def apply_empty_action(
    values: Tensor, empty: Tensor, ids: Tensor, action: str, owner: str, missing: str = "positive"
) -> Tensor:
    """The values kept after ``empty_target_action``: 0 ("neg") or 1 ("pos") for the queries
    without a positive (``missing``) document, dropped ("skip"), or a ValueError ("error")."""
    if not bool(empty.any()):
        return values
    if action == "error":
        first = int(ids[empty][0])
        raise ValueError(
            f"{owner}: {int(empty.sum())} query(ies) without a {missing} document (the first: query id {first}) "
            "and empty_target_action='error' (choose 'neg', 'pos' or 'skip' to score them; "
            f"`compute` method was provided with a query with no {missing} target.)"
        )
    if action == "skip":
        return values[~empty]
    return torch.where(empty, 1.0 if action == "pos" else 0.0, values)


def aggregate(values: Tensor, aggregation: Aggregation, dtype: torch.dtype) -> Tensor:
    """One value over the queries: their mean (in float64), median (torch's: the lower of the two
    middle values), min, max, or ``aggregation(values, dim=None)``; 0.0 over no query."""
    if values.numel() == 0:
        return torch.tensor(0.0, dtype=dtype)
    if aggregation == "mean":
        return values.mean().to(dtype)
    if aggregation == "median":
        return values.median().to(dtype)
    if aggregation == "min":
        return values.min().to(dtype)
    if aggregation == "max":
        return values.max().to(dtype)
    return aggregation(values.to(dtype), dim=None)  # type: ignore[operator]  # a callable, checked at init


def sums_of(values: Tensor, empty: Tensor) -> Tuple[float, int, int]:
    """(sum of the values of the queries with a positive, their number, the number without one):
    the states of a metric whose queries arrive whole (queries_complete=True)."""
    kept = values[~empty]
    return float(kept.sum()), int(kept.numel()), int(empty.sum())


def mean_from_sums(total: Tensor, queries: Tensor, empty: Tensor, action: str, owner: str, missing: str) -> Tensor:
    """The mean over queries from the sums of ``sums_of`` and ``empty_target_action``."""
    n_empty = int(empty)
    if action == "error" and n_empty:
        raise ValueError(
            f"{owner}: {n_empty} query(ies) without a {missing} document and empty_target_action='error' "
            "(choose 'neg', 'pos' or 'skip' to score them; "
            f"`compute` method was provided with a query with no {missing} target.)"
        )
    total_f = float(total) + (n_empty if action == "pos" else 0)
    count = int(queries) + (0 if action == "skip" else n_empty)
    return torch.tensor(total_f / count if count else 0.0, dtype=torch.float64)
