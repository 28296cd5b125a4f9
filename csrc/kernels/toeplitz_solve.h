/*
 * toeplitz_solve.h: the solution of symmetric positive definite Toeplitz systems, one per row (the
 * audio metrics' SignalDistortionRatio: its distortion filter). Contract in csrc/API_AUDIO.md
 * ("toeplitz_solve"); kernels/reference/toeplitz_solve.py is the oracle. out is untouched on
 * failure.
 */
#ifndef TT_TOEPLITZ_SOLVE_H
#define TT_TOEPLITZ_SOLVE_H

#include "core/view.h"

/* out float64 [B, L] (contiguous): row i solves toeplitz(r[i]) x = b[i], the symmetric Toeplitz
 * matrix whose first column is r[i] (r, b float64 [B, L], any strides, L >= 1), by Levinson's
 * recursion. A row whose matrix is not positive definite (a leading minor <= 0, NaN or infinity
 * on the way) is all NaN. */
tt_status tt_toeplitz_solve(const tt_view *out, const tt_view *r, const tt_view *b, tt_error *err);

#endif /* TT_TOEPLITZ_SOLVE_H */
