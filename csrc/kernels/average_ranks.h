/*
 * average_ranks.h: the 1-based ranks of every column of a matrix, tied values given the mean of
 * the ranks they span (scipy.stats.rankdata's "average"): Spearman's rank correlation at compute.
 * Contract in csrc/API_REGRESSION.md ("average_ranks"); kernels/reference/average_ranks.py is
 * the oracle. `out` is untouched on failure.
 */
#ifndef TT_AVERAGE_RANKS_H
#define TT_AVERAGE_RANKS_H

#include "core/view.h"

/* out float64 [N, K] (C-contiguous) = per column of x (float16, bfloat16, float32 or float64
 * [N, K], any strides, no NaN) the average ranks 1..N of its values. -0.0 ties with 0.0. */
tt_status tt_average_ranks(const tt_view *out, const tt_view *x, tt_error *err);

#endif /* TT_AVERAGE_RANKS_H */
