/*
 * rating_sums.h: the sums Fleiss' kappa needs from a batch of rating counts, in one pass, and
 * FleissKappa's update on that pass. Contract in csrc/API_NOMINAL.md ("rating_sums",
 * "rating_update"); kernels/reference/rating_sums.py is the oracle. Outputs are untouched on
 * failure.
 */
#ifndef TT_RATING_SUMS_H
#define TT_RATING_SUMS_H

#include "core/view.h"

/* out int64 [C + 3] (contiguous) = (the ratings per category [C], the sum over samples of
 * their squared counts, the least and the largest number of ratings of a sample) of ratings:
 * integer or bool counts [N, C] >= 0, any strides. N = 0: zeros, then INT64_MAX, INT64_MIN. */
tt_status tt_rating_sums(const tt_view *out, const tt_view *ratings, tt_error *err);

/* FleissKappa's update in one call: the batch's sums added into its states. totals int64 [C] +=
 * the ratings per category; sums int64 [2] += (N, the sum of squared counts); bounds int64 [4]
 * (largest R, -least R, largest C, -least C): where bounds[0] is INT64_MIN (nothing held) it
 * becomes (R, -R, C, -C), else the batch's R and C must be bounds[0] and bounds[2]. Every
 * sample must have one number of ratings R. N = 0 changes nothing (totals is not read). Every
 * check runs before any write: on failure the states are untouched. */
tt_status tt_rating_update(const tt_view *totals, const tt_view *sums, const tt_view *bounds,
                           const tt_view *ratings, tt_error *err);

#endif /* TT_RATING_SUMS_H */
