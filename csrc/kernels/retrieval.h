/*
 * retrieval.h: the retrieval metrics' per-query values (MAP, MRR, NDCG@k, precision@k,
 * recall@k, hit rate@k, fall-out@k, R-precision) from documents grouped by query, each group
 * ordered by score (descending). Contract in csrc/API_TEXT.md ("Retrieval order and per-query values");
 * kernels/reference/retrieval.py is the oracle. `out` is untouched on failure.
 */
#ifndef TT_RETRIEVAL_H
#define TT_RETRIEVAL_H

#include "core/view.h"

/* The metric codes (torchtally.kernels.retrieval's METRICS). */
enum {
    TT_RETRIEVAL_MAP = 0,
    TT_RETRIEVAL_MRR,
    TT_RETRIEVAL_NDCG,
    TT_RETRIEVAL_PRECISION,
    TT_RETRIEVAL_RECALL,
    TT_RETRIEVAL_HIT_RATE,
    TT_RETRIEVAL_FALL_OUT,
    TT_RETRIEVAL_R_PRECISION,
    TT_RETRIEVAL_METRICS
};

/* out float64 [Q, 2]: per query (in the order of `query`) its value and 1.0 where it has no
 * positive document (no negative one for fall-out), else 0.0. query int64 [N] non-decreasing,
 * Q distinct values; preds float [N] without NaN, non-increasing within a query; target [N]
 * non-negative (0 or 1 except for NDCG); top_k >= 0 (0: every document); adaptive_k (precision
 * only): a top_k above the query's length counts as its length. */
tt_status tt_retrieval_scores(const tt_view *out, const tt_view *query, const tt_view *preds,
                              const tt_view *target, int64_t metric, int64_t top_k, int adaptive_k,
                              tt_error *err);

/* query_out int64 [N], score_out float32 [N], relevance_out float32 [N] (C-contiguous) = the
 * documents (query int64 [N], preds float32 [N] without NaN, target [N]: bool, integer or float
 * relevances, each exactly a float32) ordered by (query ascending, score descending, position
 * ascending): a stable LSD radix sort; -0.0 scores become 0.0. N < 2^32. retrieval_order.c. */
tt_status tt_retrieval_order(const tt_view *query_out, const tt_view *score_out,
                             const tt_view *relevance_out, const tt_view *query,
                             const tt_view *preds, const tt_view *target, tt_error *err);

/* query_out int64 [N], score_out float32 [N], relevance_out bool or float32 [N] (C-contiguous)
 * = a batch's documents as the retrieval metrics store them: indexes [N] (integer, not bool)
 * widened, preds [N] (float16, bfloat16, float32, float64) rounded to float32, target [N] (bool,
 * integer or float) as bool (each 0 or 1) or, for a float32 relevance_out (NDCG's graded
 * relevance), as float32 (each finite and >= 0). A NaN score or another relevance is a
 * ValueError naming preds or target and the first such document; every document is checked
 * before an output is written. Any strides. retrieval_rows.c. */
tt_status tt_retrieval_rows(const tt_view *query_out, const tt_view *score_out,
                            const tt_view *relevance_out, const tt_view *indexes,
                            const tt_view *preds, const tt_view *target, tt_error *err);

#endif /* TT_RETRIEVAL_H */
