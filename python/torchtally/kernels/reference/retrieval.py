"""Torch reference of the retrieval kernels (csrc/API_TEXT.md, "Retrieval order and per-query values").

Documents arrive grouped by query (``query`` non-decreasing) and, within a query, ordered by
score (descending). Per query of n documents, with k = min(top_k or n, n), rel its relevances
in that order and f_j = rel_j != 0 and s_j > 0 (torchmetrics counts a document scored <= 0 as
not retrieved for MAP, MRR, precision and recall):

* MAP: mean over the j < k with f_j of (#{i <= j : f_i}) / (j + 1); 0 without one;
* MRR: 1 / (first j < k with f_j, plus 1); 0 without one;
* NDCG: the DCG of the scores' order, a group of equal scores sharing its mean gain over the
  discounts 1 / log2(p + 2) of the positions p < k it spans, over the DCG of the relevances'
  own order (descending); 0 where that is 0;
* precision: #{j < k : f_j} / (top_k, or n when top_k is 0 or adaptive_k and top_k > n);
* recall: #{j < k : f_j} / #positives; hit rate: 1 if some j < k is relevant;
* fall-out: #{j < k : rel_j == 0} / #negatives; R-precision: #{j < R : rel_j != 0} / R, R the
  number of positives.

A query without a positive (fall-out: without a negative) gets 0 and the flag 1. Vectorised over
all queries at once (segment sums), in float64; it runs on any device.
"""

import torch
from torch import Tensor

from . import checks as chk

METRICS = ("map", "mrr", "ndcg", "precision", "recall", "hit_rate", "fall_out", "r_precision")
_EXPECTED_OUT = "a float64 tensor [Q, 2]"


def _check(out, query, preds, target, metric, top_k, adaptive_k):
    chk.no_meta(("query", query), ("preds", preds), ("target", target))
    out = chk.output("out", out, torch.float64, _EXPECTED_OUT, (2,))
    if out.shape[1] != 2:
        chk.fail("out", out, _EXPECTED_OUT, True)
    query = chk.tensor("query", query)
    if query.dtype != torch.int64:
        chk.fail("query", query, "an int64 tensor [N]", False)
    if query.dim() != 1:
        chk.fail("query", query, "an int64 tensor [N]", True)
    chk.same_device("query", query, out)
    n = query.shape[0]
    preds = chk.scores("preds", preds, out, f"a floating tensor [{n}]", lambda s: s == (n,))
    target = chk.tensor("target", target)
    if target.dim() != 1 or target.shape[0] != n:
        chk.fail("target", target, f"a tensor [{n}] of relevances", True)
    chk.same_device("target", target, out)
    metric = chk.index_value("metric", metric, allow_none=False)
    if not 0 <= metric < len(METRICS):
        raise ValueError(f"metric: expected 0..{len(METRICS) - 1}, got {metric}")
    top_k = chk.index_value("top_k", top_k, allow_none=False)
    if top_k < 0:
        raise ValueError(f"top_k: expected >= 0 (0: every document), got {top_k}")
    return out, query, preds, target, metric, top_k, bool(adaptive_k)


def _check_documents(query: Tensor, s: Tensor, y: Tensor, binary: bool) -> None:
    i = chk.first(torch.isnan(s), None)
    if i is not None:
        raise ValueError(f"preds: NaN at document {i}")
    bad = ~(y >= 0) | torch.isinf(y)
    if binary:
        bad |= (y != 0) & (y != 1)
    i = chk.first(bad, None)
    if i is not None:
        what = "0 or 1" if binary else "a finite relevance >= 0"
        raise ValueError(f"target: expected {what}, got {float(y[i]):g} at document {i}")
    if query.numel() > 1:
        i = chk.first(query[1:] < query[:-1], None)
        if i is not None:
            raise ValueError(
                f"query: expected non-decreasing query ids, got {int(query[i + 1])} after {int(query[i])} "
                f"at document {i + 1}"
            )
        i = chk.first((query[1:] == query[:-1]) & (s[1:] > s[:-1]), None)
        if i is not None:
            raise ValueError(
                f"preds: expected scores non-increasing within a query, got {float(s[i + 1]):g} after "
                f"{float(s[i]):g} at document {i + 1}"
            )


def _segment_sum(values: Tensor, group: Tensor, groups: int) -> Tensor:
    return torch.zeros(groups, dtype=torch.float64, device=values.device).index_add_(0, group, values.double())


def retrieval_scores(out, query, preds, target, metric, top_k, adaptive_k, /) -> None:
    """out float64 [Q, 2] = per query (value, 1.0 where it has no positive / no negative)."""
    out, query, preds, target, metric, top_k, adaptive_k = _check(out, query, preds, target, metric, top_k, adaptive_k)
    s, y = preds.double(), target.double()
    name = METRICS[metric]
    _check_documents(query, s, y, name != "ndcg")
    n = query.shape[0]
    new = torch.ones(n, dtype=torch.bool, device=query.device)
    if n > 1:
        new[1:] = query[1:] != query[:-1]
    groups = int(new.sum())
    if groups != out.shape[0]:
        raise ValueError(f"out: expected [{groups}, 2] (one row per query), got {chk.describe(out)}")
    if n == 0:
        return
    group = torch.cumsum(new.long(), 0) - 1
    sizes = torch.bincount(group, minlength=groups)
    starts = torch.cumsum(sizes, 0) - sizes
    pos = torch.arange(n, device=query.device) - starts[group]
    size = sizes.double()
    k = sizes if top_k == 0 else sizes.clamp(max=top_k)
    in_k = pos < k[group]
    positives = _segment_sum(y, group, groups)
    empty = positives == 0
    found = (y != 0) & (s > 0)
    value = torch.zeros(groups, dtype=torch.float64, device=out.device)
    if name == "map":
        hit = found & in_k
        counted = torch.cumsum(hit.long(), 0)
        before = (counted - hit.long())[starts]  # hits before each query's first document
        rank_in_hits = (counted - before[group]).double()
        total = _segment_sum(hit, group, groups)
        sums = _segment_sum(torch.where(hit, rank_in_hits / (pos + 1).double(), 0.0), group, groups)
        value = torch.where(total > 0, sums / total.clamp(min=1), 0.0)
    elif name == "mrr":
        first = torch.full((groups,), n + 1, dtype=torch.long, device=out.device)
        first.scatter_reduce_(0, group, torch.where(found & in_k, pos, n + 1), "amin")
        value = torch.where(first <= n, 1.0 / (first + 1).double(), 0.0)
    elif name == "ndcg":
        value = _ndcg(s, y, group, groups, pos, in_k, k, starts)
    elif name in ("precision", "recall"):
        hits = _segment_sum(found & in_k, group, groups)
        if name == "recall":
            value = hits / positives.clamp(min=1)
        else:
            denominator = size if top_k == 0 else torch.full_like(size, float(top_k))
            if adaptive_k and top_k:
                denominator = torch.where(size < top_k, size, denominator)
            value = hits / denominator
        value = torch.where(empty, 0.0, value)
    elif name == "hit_rate":
        value = (_segment_sum((y != 0) & in_k, group, groups) > 0).double()
    elif name == "fall_out":
        negatives = size - positives
        empty = negatives == 0
        value = torch.where(empty, 0.0, _segment_sum((y == 0) & in_k, group, groups) / negatives.clamp(min=1))
    else:  # r_precision
        hits = _segment_sum((y != 0) & (pos.double() < positives[group]), group, groups)
        value = torch.where(empty, 0.0, hits / positives.clamp(min=1))
    out[:, 0] = value
    out[:, 1] = empty.double()


def _ndcg(s: Tensor, y: Tensor, group: Tensor, groups: int, pos: Tensor, in_k: Tensor, k: Tensor, starts: Tensor):
    n = s.shape[0]
    discount = torch.where(in_k, 1.0 / torch.log2(pos.double() + 2.0), 0.0)
    tie_new = torch.ones(n, dtype=torch.bool, device=s.device)
    if n > 1:
        tie_new[1:] = (group[1:] != group[:-1]) | (s[1:] != s[:-1])
    tie = torch.cumsum(tie_new.long(), 0) - 1
    ties = int(tie_new.sum())
    tie_sizes = torch.bincount(tie, minlength=ties).double()
    gain = _segment_sum(y, tie, ties) / tie_sizes
    discounts = _segment_sum(discount, tie, ties)
    tie_group = group[tie_new]
    dcg = _segment_sum(gain * discounts, tie_group, groups)
    # the ideal order: relevances descending within each query (a stable sort by relevance, then by query)
    by_rel = torch.sort(y, descending=True, stable=True).indices
    ideal_order = by_rel[torch.sort(group[by_rel], stable=True).indices]
    ideal = _segment_sum(y[ideal_order] * discount, group, groups)
    return torch.where(ideal == 0, 0.0, dcg / torch.where(ideal == 0, 1.0, ideal))


def retrieval_order(query_out, score_out, relevance_out, query, preds, target, /) -> None:
    """The documents ordered by (query ascending, score descending, relevance ascending), into
    query_out int64 [N], score_out float32 [N] and relevance_out float32 [N]: three stable sorts."""
    chk.no_meta(("query", query), ("preds", preds), ("target", target))
    query = chk.tensor("query", query)
    if query.dtype != torch.int64:
        chk.fail("query", query, "an int64 tensor [N]", False)
    if query.dim() != 1:
        chk.fail("query", query, "an int64 tensor [N]", True)
    n = query.shape[0]
    preds = chk.tensor("preds", preds)
    if preds.dtype != torch.float32:
        chk.fail("preds", preds, f"a float32 tensor [{n}]", False)
    if tuple(preds.shape) != (n,):
        chk.fail("preds", preds, f"a float32 tensor [{n}]", True)
    target = chk.tensor("target", target)
    if tuple(target.shape) != (n,):
        chk.fail("target", target, f"a tensor [{n}] of relevances", True)
    outs = []
    for name, t, dtype in (
        ("query_out", query_out, torch.int64),
        ("score_out", score_out, torch.float32),
        ("relevance_out", relevance_out, torch.float32),
    ):
        expected = f"a {str(dtype).replace('torch.', '')} tensor [{n}]"
        t = chk.output(name, t, dtype, expected, (1,))
        if t.shape[0] != n:
            chk.fail(name, t, expected, True)
        outs.append(t)
    for name, t in (("query", query), ("preds", preds), ("target", target)):
        chk.same_device(name, t, outs[0])
    i = chk.first(torch.isnan(preds), None)
    if i is not None:
        raise ValueError(f"preds: NaN at document {i}")
    order = torch.sort(target.float(), stable=True).indices
    order = order[torch.sort(preds[order], descending=True, stable=True).indices]
    order = order[torch.sort(query[order], stable=True).indices]
    outs[0].copy_(query[order])
    outs[1].copy_(preds[order] + 0.0)  # -0.0 becomes 0.0
    outs[2].copy_(target[order].float())


_BINARY = "0 or 1 (binary relevance: `target` must contain `binary` values)"
_GRADED = "a finite relevance >= 0"


def retrieval_rows(query_out, score_out, relevance_out, indexes, preds, target, /) -> None:
    """A batch's documents as the retrieval metrics store them: query_out int64 [N] = indexes
    (any integer dtype), score_out float32 [N] = preds (floating, no NaN), relevance_out bool [N]
    = target (each 0 or 1) or float32 [N] = target (each finite and >= 0)."""
    chk.no_meta(("indexes", indexes), ("preds", preds), ("target", target))
    indexes = chk.tensor("indexes", indexes)
    if indexes.dtype not in chk.LABEL_DTYPES or indexes.dtype == torch.bool:
        chk.fail("indexes", indexes, "an integer tensor [N] of query ids", False)
    if indexes.dim() != 1:
        chk.fail("indexes", indexes, "an integer tensor [N] of query ids", True)
    n = indexes.shape[0]
    query_out = _row_output("query_out", query_out, (torch.int64,), n)
    preds = chk.scores("preds", preds, query_out, f"a floating tensor [{n}] of scores", lambda s: s == (n,))
    target = chk.tensor("target", target)
    if target.dtype not in chk.LABEL_DTYPES + chk.SCORE_DTYPES:
        chk.fail("target", target, f"a bool, integer or floating tensor [{n}] of relevances", False)
    if tuple(target.shape) != (n,):
        chk.fail("target", target, f"a tensor [{n}] of relevances", True)
    score_out = _row_output("score_out", score_out, (torch.float32,), n)
    relevance_out = _row_output("relevance_out", relevance_out, (torch.bool, torch.float32), n)
    for name, t in (
        ("indexes", indexes),
        ("target", target),
        ("score_out", score_out),
        ("relevance_out", relevance_out),
    ):
        chk.same_device(name, t, query_out)
    graded = relevance_out.dtype == torch.float32
    i = chk.first(torch.isnan(preds), None)
    if i is not None:
        raise ValueError(f"preds: NaN at document {i} (a NaN score has no rank)")
    i = _first_bad_relevance(target, graded)
    if i is not None:
        raise ValueError(f"target: expected {_GRADED if graded else _BINARY}, got {target[i].item()} at document {i}")
    query_out.copy_(indexes)
    score_out.copy_(preds)
    relevance_out.copy_(target)


def _row_output(name: str, t: object, dtypes: tuple, n: int) -> Tensor:
    """An output row: a C-contiguous tensor [n] of one of ``dtypes``."""
    expected = f"a {' or '.join(str(d).replace('torch.', '') for d in dtypes)} tensor [{n}]"
    t = chk.tensor(name, t)
    t = chk.output(name, t, t.dtype if t.dtype in dtypes else dtypes[0], expected, (1,))
    if t.shape[0] != n:
        chk.fail(name, t, expected, True)
    return t


def _first_bad_relevance(target: Tensor, graded: bool):
    """The first document whose relevance is not 0 or 1 (``graded``: not finite and >= 0), or None."""
    if target.dtype == torch.bool or target.numel() == 0:
        return None
    if not target.is_floating_point():
        lo, hi = torch.aminmax(target)  # an integer target is in range iff its extremes are
        if lo.item() >= 0 and (graded or hi.item() <= 1):
            return None
        return chk.first((target < 0) if graded else (target < 0) | (target > 1), None)
    bad = ~(target >= 0) | torch.isinf(target) if graded else (target != 0) & (target != 1)
    return chk.first(bad, None)
