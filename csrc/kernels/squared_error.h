/*
 * squared_error.h: the float64 sum of squared differences of two equal-length tensors, and the
 * range of the second, in one pass (the image metrics' PeakSignalNoiseRatio). Contract in
 * csrc/API_IMAGE.md ("squared_error"); kernels/reference/squared_error.py is the oracle. out is
 * untouched on failure.
 */
#ifndef TT_SQUARED_ERROR_H
#define TT_SQUARED_ERROR_H

#include "core/view.h"

/* out float64 [3] = (sum (x' - y')^2, min y', max y') over x, y [N] (one floating dtype, one
 * length, any stride), where x', y' are x, y widened to double and, when bounds (float64 [2]:
 * lo, hi) is given, clamped to [lo, hi]. NaN propagates into the sum and the range; N = 0 gives
 * (0, +inf, -inf). */
tt_status tt_squared_error(const tt_view *out, const tt_view *x, const tt_view *y,
                           const tt_view *bounds, tt_error *err);

#endif /* TT_SQUARED_ERROR_H */
