/*
 * residual_moments.h: the moments of the residual (target - preds) and of the target per output,
 * R2Score's and ExplainedVariance's state, from one read of preds and target with the finiteness
 * verdict. Contract in csrc/API_REGRESSION.md ("residual_moments");
 * kernels/reference/residual_moments.py is the oracle. Nothing is written on failure.
 */
#ifndef TT_RESIDUAL_MOMENTS_H
#define TT_RESIDUAL_MOMENTS_H

#include "core/view.h"

/* state float64 [2D, 6], C-contiguous, moments rows (n, sum, mean, m2, min, max) as csrc/API.md:
 * rows 0..D-1 those of y - x, rows D..2D-1 those of y; x (preds) and y (target) floating [N] or
 * [N, D] of one shape, any strides, float dtypes may differ. A NaN or inf input is a TT_EVALUE
 * naming the first one (x first), and the state is untouched. */
tt_status tt_residual_moments(const tt_view *state, const tt_view *x, const tt_view *y,
                              tt_error *err);

#endif /* TT_RESIDUAL_MOMENTS_H */
