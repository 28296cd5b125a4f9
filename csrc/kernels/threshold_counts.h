/*
 * threshold_counts.h: CriticalSuccessIndex's batch, the counts of elements at or above a
 * threshold in preds and target (neither, target only, preds only, both), with the finiteness
 * verdict, in one read of the inputs. Contract in csrc/API_REGRESSION.md ("threshold_counts");
 * kernels/reference/threshold_counts.py is the oracle. Nothing is written on failure.
 */
#ifndef TT_THRESHOLD_COUNTS_H
#define TT_THRESHOLD_COUNTS_H

#include "core/view.h"

/* counts int64 [4], C-contiguous, += (neither, y only, x only, both) over the elements of x
 * (preds) and y (target): float32 or float64 [N] or [N, D] of one shape, any strides, dtypes may
 * differ. An element is at or above `threshold` (not NaN) when value >= the threshold rounded to
 * the element's dtype (torch's comparison of a tensor with a Python number). A NaN or inf input is
 * a TT_EVALUE naming the first one (x first), and counts is untouched. */
tt_status tt_threshold_counts(const tt_view *counts, const tt_view *x, const tt_view *y,
                              double threshold, tt_error *err);

#endif /* TT_THRESHOLD_COUNTS_H */
