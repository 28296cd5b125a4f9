"""The retrieval kernels' routes (csrc/API_TEXT.md, "Retrieval order and per-query values"): the C
core for CPU tensors, the torch reference (kernels.reference.retrieval) elsewhere."""

from torch import Tensor

from . import detached, host_module, ops

# The metric codes of retrieval_scores (csrc/kernels/retrieval.h).
METRICS = ("map", "mrr", "ndcg", "precision", "recall", "hit_rate", "fall_out", "r_precision")


def retrieval_scores(
    out: Tensor, query: Tensor, preds: Tensor, target: Tensor, metric: int, top_k: int, adaptive_k: bool
) -> None:
    """out float64 [Q, 2] = per query of the grouped, score-ordered documents: (value of the metric
    ``METRICS[metric]`` at ``top_k`` (0: all), 1.0 where the query has no positive (fall-out: no
    negative) else 0.0)."""
    if ops.compiling():
        return ops.retrieval_scores(out, query, detached(preds), target, metric, top_k, adaptive_k)
    host_module(out).retrieval_scores(out, query, detached(preds), target, metric, top_k, adaptive_k)


def retrieval_order(
    query_out: Tensor, score_out: Tensor, relevance_out: Tensor, query: Tensor, preds: Tensor, target: Tensor
) -> None:
    """The documents (query int64 [N], preds float32 [N] without NaN, target [N] relevances)
    ordered by (query ascending, score descending, relevance ascending) into query_out int64, score_out
    float32 and relevance_out float32 [N]."""
    if ops.compiling():
        return ops.retrieval_order(query_out, score_out, relevance_out, query, detached(preds), target)
    host_module(query_out).retrieval_order(query_out, score_out, relevance_out, query, detached(preds), target)


def retrieval_rows(
    query_out: Tensor, score_out: Tensor, relevance_out: Tensor, indexes: Tensor, preds: Tensor, target: Tensor
) -> None:
    """A batch's documents as the retrieval metrics store them, checked: query_out int64 [N] =
    indexes (any integer dtype), score_out float32 [N] = preds (floating, no NaN), relevance_out
    bool [N] = target (each 0 or 1) or float32 [N] = target (NDCG's graded relevance: each
    finite and >= 0). Every retrieval update's one call (a custom op inside torch.compile, though
    a retrieval update runs eagerly there: its checks read values)."""
    if ops.compiling():
        return ops.retrieval_rows(query_out, score_out, relevance_out, indexes, detached(preds), target)
    host_module(query_out).retrieval_rows(query_out, score_out, relevance_out, indexes, detached(preds), target)
