/*
 * rating_sums.h: the sums Fleiss' kappa needs from a batch of rating counts, in one pass.
 * Contract in csrc/API.md ("rating_sums"); kernels/reference/rating_sums.py is the oracle. out is
 * untouched on failure.
 */
#ifndef TT_RATING_SUMS_H
#define TT_RATING_SUMS_H

#include "core/view.h"

/* out int64 [C + 3] (contiguous) = (the ratings per category [C], the sum over samples of
 * their squared counts, the least and the largest number of ratings of a sample) of ratings:
 * integer or bool counts [N, C] >= 0, any strides. N = 0: zeros, then INT64_MAX, INT64_MIN. */
tt_status tt_rating_sums(const tt_view *out, const tt_view *ratings, tt_error *err);

#endif /* TT_RATING_SUMS_H */
