/*
 * calibration.h: the calibration-error bins: per bin a sample count and sums of confidence and
 * accuracy. Contract in csrc/API.md ("Calibration bins"); kernels/reference/calibration.py is
 * the oracle. `counts` and `sums` are untouched on failure.
 */
#ifndef TT_CALIBRATION_H
#define TT_CALIBRATION_H

#include "core/view.h"

/* counts int64 [B] += samples per bin; sums float64 [B, 2] += (confidence, hit) per bin.
 * conf float [N]; hit labels [N] in {0, 1}; boundaries float64 [B], finite, non-decreasing.
 * Sample i's bin: #{j : boundaries[j] <= conf[i]} - 1; conf[i] below boundaries[0] or NaN is
 * an error. */
tt_status tt_calibration_update(const tt_view *counts, const tt_view *sums, const tt_view *conf,
                                const tt_view *hit, const tt_view *boundaries, tt_error *err);

#endif /* TT_CALIBRATION_H */
