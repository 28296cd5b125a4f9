/*
 * kendall_counts.h: the pair counts of Kendall's tau (concordant, discordant, tied) and the tie
 * statistics of its variants and test, per output, from every (preds, target) pair: Knight's
 * method. Contract in csrc/API_REGRESSION.md ("kendall_counts"); kernels/reference/
 * kendall_counts.py is the oracle. `out` is untouched on failure.
 */
#ifndef TT_KENDALL_COUNTS_H
#define TT_KENDALL_COUNTS_H

#include "core/view.h"

/* out float64 [D, 11] (C-contiguous) = per output d of pairs (float32 or float64 [N, 2, D], any
 * strides, no NaN; row 0 preds x, row 1 target y): (C - D, C, D, distinct x, distinct y, Tx,
 * Tx1, Tx2, Ty, Ty1, Ty2), C and D the concordant and discordant pairs, and over the runs of t
 * tied values of x (of y): T = sum t(t-1)/2, T1 = sum t(t-1)(t-2), T2 = sum t(t-1)(2t+5). */
tt_status tt_kendall_counts(const tt_view *out, const tt_view *pairs, tt_error *err);

#endif /* TT_KENDALL_COUNTS_H */
