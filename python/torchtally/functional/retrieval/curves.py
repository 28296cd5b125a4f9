"""Retrieval curves over queries: per-query AUROC (within the top k), precision and recall at
every k up to max_k, and the best recall at a fixed precision; vectorised torch over the
documents grouped and ordered once by the C kernel (compute.group_documents), no loop over
queries (but for AUROC with ``max_fpr``: one small torch evaluation per query).

Documents of equal score are ordered least relevant first, as for the other retrieval metrics
(this decides which documents of a tie fall inside a ``top_k`` cutoff). AUROC itself averages
over the ties it holds (the Mann-Whitney statistic, ties counted half, which is the
trapezoidal area under torchmetrics' exact ROC curve).
"""

from typing import Callable, Optional, Tuple, Union

import torch
from torch import Tensor

from .compute import group_documents

_F64 = torch.float64


def _layout(query: Tensor) -> Tuple[Tensor, Tensor, Tensor, Tensor]:
    """For documents grouped by query: (group of each [N], position within it [N], sizes [Q], ids [Q])."""
    n = query.shape[0]
    new = torch.ones(n, dtype=torch.bool)
    if n > 1:
        new[1:] = query[1:] != query[:-1]
    group = torch.cumsum(new.long(), 0) - 1
    sizes = torch.bincount(group, minlength=int(new.sum()))
    starts = torch.cumsum(sizes, 0) - sizes
    return group, torch.arange(n) - starts[group], sizes, query[new]


def _sum(values: Tensor, index: Tensor, size: int) -> Tensor:
    return torch.zeros(size, dtype=_F64).index_add_(0, index, values.to(_F64))


def precision_recall_rows(
    query: Tensor, score: Tensor, relevance: Tensor, max_k: Optional[int], adaptive_k: bool
) -> Tuple[Tensor, Tensor, Tensor, Tensor, int]:
    """(precision [Q, K], recall [Q, K], empty [Q], ids [Q], K) at k = 1..K, K = max_k or the
    longest query: precision@k = hits in the top k / k (/ min(k, n) with ``adaptive_k``),
    recall@k = hits in the top k / positives; rows of queries without a positive are 0."""
    q, _, rel = group_documents(query.cpu(), score.cpu(), relevance.cpu())
    group, pos, sizes, ids = _layout(q)
    groups = ids.shape[0]
    k = int(max_k) if max_k is not None else (int(sizes.max()) if groups else 1)
    positives = _sum(rel, group, groups)
    empty = positives == 0
    hits = torch.zeros(groups, k, dtype=_F64)
    keep = pos < k
    hits[group[keep], pos[keep]] = rel[keep].to(_F64)
    hits = hits.cumsum(1)
    ranks = torch.arange(1, k + 1, dtype=_F64).expand(groups, k)
    if adaptive_k:
        ranks = torch.minimum(ranks, sizes[:, None].to(_F64))
    precision = torch.where(empty[:, None], 0.0, hits / ranks)
    recall = torch.where(empty[:, None], 0.0, hits / positives.clamp(min=1)[:, None])
    return precision, recall, empty, ids, k


def auroc_values(
    query: Tensor, score: Tensor, relevance: Tensor, top_k: Optional[int], max_fpr: Optional[float]
) -> Tuple[Tensor, Tensor, Tensor]:
    """(AUROC [Q] over each query's top ``top_k`` documents (0 where they hold no positive or no
    negative), empty [Q]: no positive at all, ids [Q])."""
    q, s, rel = group_documents(query.cpu(), score.cpu(), relevance.cpu())
    group, pos, sizes, ids = _layout(q)
    groups = ids.shape[0]
    empty = _sum(rel, group, groups) == 0
    keep = pos < (top_k if top_k is not None else pos.shape[0] + 1)
    q, s, rel, group = q[keep], s[keep], rel[keep] != 0, group[keep]
    p_total, n_total = _sum(rel, group, groups), _sum(~rel, group, groups)
    defined = (p_total > 0) & (n_total > 0)
    if max_fpr is not None and max_fpr != 1:
        values = torch.zeros(groups, dtype=_F64)
        bounds = torch.cumsum(torch.bincount(group, minlength=groups), 0).tolist()
        start = 0
        for g, end in enumerate(bounds):
            if bool(defined[g]):
                values[g] = _partial_auroc(s[start:end], rel[start:end], float(max_fpr))
            start = end
        return values, empty, ids
    n = s.shape[0]
    tie_new = torch.ones(n, dtype=torch.bool)
    if n > 1:
        tie_new[1:] = (group[1:] != group[:-1]) | (s[1:] != s[:-1])
    tie = torch.cumsum(tie_new.long(), 0) - 1
    ties = int(tie_new.sum()) if n else 0
    tie_pos, tie_neg = _sum(rel, tie, ties), _sum(~rel, tie, ties)
    tie_group = group[tie_new]
    neg_through = torch.cumsum(tie_neg, 0)  # negatives up to and including each tie group
    first = torch.ones(ties, dtype=torch.bool)  # each query's first tie group (every query keeps one)
    if ties > 1:
        first[1:] = tie_group[1:] != tie_group[:-1]
    neg_above = neg_through - (neg_through - tie_neg)[first][tie_group]  # ... within its query
    below = n_total[tie_group] - neg_above
    u = _sum(tie_pos * (below + 0.5 * tie_neg), tie_group, groups)
    values = torch.where(defined, u / (p_total * n_total).clamp(min=1), 0.0)
    return values, empty, ids


def _partial_auroc(s: Tensor, rel: Tensor, max_fpr: float) -> Tensor:
    """McClish-standardised partial AUROC up to ``max_fpr`` of one query (scores descending)."""
    last = torch.ones(s.shape[0], dtype=torch.bool)
    last[:-1] = s[1:] != s[:-1]
    tp = torch.cumsum(rel.to(_F64), 0)[last]
    fp = torch.cumsum((~rel).to(_F64), 0)[last]
    zero = torch.zeros(1, dtype=_F64)
    tpr, fpr = torch.cat([zero, tp / tp[-1]]), torch.cat([zero, fp / fp[-1]])
    limit = torch.tensor(max_fpr, dtype=_F64)
    stop = int(torch.bucketize(limit, fpr, right=True))
    weight = (limit - fpr[stop - 1]) / (fpr[stop] - fpr[stop - 1])
    tpr = torch.cat([tpr[:stop], torch.lerp(tpr[stop - 1], tpr[stop], weight).view(1)])
    fpr = torch.cat([fpr[:stop], limit.view(1)])
    area = torch.trapezoid(tpr, fpr)
    min_area = 0.5 * max_fpr**2
    return 0.5 * (1 + (area - min_area) / (max_fpr - min_area))


def aggregate_rows(rows: Tensor, aggregation: Union[str, Callable[..., Tensor]], dtype: torch.dtype) -> Tensor:
    """One curve over the queries' rows [Q, K]: mean, median, min, max over dim 0, or
    ``aggregation(rows, dim=0)``."""
    if aggregation == "mean":
        return rows.mean(0).to(dtype)
    if aggregation in ("median", "min", "max"):
        return getattr(rows, str(aggregation))(0).values.to(dtype)
    return aggregation(rows.to(dtype), dim=0)  # type: ignore[operator]  # a callable, checked at init


def recall_at_fixed_precision(
    precision: Tensor, recall: Tensor, top_k: Tensor, min_precision: float
) -> Tuple[Tensor, Tensor]:
    """(the largest recall whose precision >= min_precision, its k: the largest such k among
    equal recalls); (0, len(top_k)) where none or where that recall is 0 (torchmetrics' rule)."""
    ok = precision >= min_precision
    if not bool(ok.any()):
        return torch.zeros((), dtype=recall.dtype), torch.tensor(len(top_k))
    best = recall[ok].max()
    if float(best) == 0.0:
        return best, torch.tensor(len(top_k), dtype=top_k.dtype)
    k = top_k[ok & (recall == best)].max()
    return best, k
