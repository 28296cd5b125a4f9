/*
 * crps_scores.h: the continuous ranked probability score of each sample of an ensemble forecast
 * (ContinuousRankedProbabilityScore's update). Contract in csrc/API_REGRESSION.md
 * ("crps_scores"); kernels/reference/crps_scores.py is the oracle. `out` is untouched on failure.
 */
#ifndef TT_CRPS_SCORES_H
#define TT_CRPS_SCORES_H

#include "core/view.h"

/* out float64 [N] (C-contiguous) = per sample i of preds (floating or integer [N, M], M >= 2,
 * any strides) and target ([N], any strides) the CRPS of the members' empirical distribution:
 * mean_k |x_k - y| - sum_k (2k - M + 1) x_(k) / M^2, x_(k) the k-th smallest member, in float64.
 * A NaN or inf input is a ValueError naming preds (first) or target and its flat index. */
tt_status tt_crps_scores(const tt_view *out, const tt_view *preds, const tt_view *target,
                         tt_error *err);

#endif /* TT_CRPS_SCORES_H */
