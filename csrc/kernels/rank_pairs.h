/*
 * rank_pairs.h: a batch of (preds, target) pairs as the rank correlations store them
 * (SpearmanCorrCoef, KendallRankCorrCoef: rows [2, D] per sample). Contract in
 * csrc/API_REGRESSION.md ("rank_pairs"); kernels/reference/rank_pairs.py is the oracle. `out` is
 * untouched on failure.
 */
#ifndef TT_RANK_PAIRS_H
#define TT_RANK_PAIRS_H

#include "core/view.h"

/* out float32 or float64 [N, 2, D] (C-contiguous): out[i, 0, j] = preds[i, j] and out[i, 1, j] =
 * target[i, j] in out's dtype (torch's cast: round to nearest). preds and target: one shape, [N]
 * (D = 1) or [N, D], floating or integer (not bool), any strides. A value that is not finite in
 * out's dtype (NaN, inf, or a float64 beyond float32's range) is a ValueError naming preds (its
 * first such element) or else target. */
tt_status tt_rank_pairs(const tt_view *out, const tt_view *preds, const tt_view *target,
                        tt_error *err);

#endif /* TT_RANK_PAIRS_H */
