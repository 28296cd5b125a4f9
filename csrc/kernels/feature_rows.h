/*
 * feature_rows.h: a batch of feature rows copied into a generative-image metric's float32 state
 * (KernelInceptionDistance, MemorizationInformedFrechetInceptionDistance, InceptionScore), with
 * the check that every value is finite in float32, in one call. Contract in csrc/API_IMAGE.md
 * ("feature_rows"); kernels/reference/feature_rows.py is the oracle. out is untouched on failure.
 */
#ifndef TT_FEATURE_ROWS_H
#define TT_FEATURE_ROWS_H

#include "core/view.h"

/* out float32 [N * D] (C-contiguous) = x [N, D] (float16, bfloat16, float32 or float64, any
 * strides) rounded to float32, row after row. A value that is NaN, infinite or rounds to an
 * infinite float32 is a ValueError naming x with its row and column, and nothing is written. */
tt_status tt_feature_rows(const tt_view *out, const tt_view *x, tt_error *err);

#endif /* TT_FEATURE_ROWS_H */
