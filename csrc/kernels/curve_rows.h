/*
 * curve_rows.h: one batch of an exact curve metric's update turned into the rows of its cat
 * state (float32 scores, compact labels) in two passes over the batch, for the batches that
 * need no conversion: probabilities without NaN and with labels in range. Any other batch is
 * declined (size -1, nothing written) and takes the general path, which converts logits or
 * raises. Contract in csrc/API_CURVES.md; kernels/reference/curve_rows.py is the oracle.
 */
#ifndef TT_CURVE_ROWS_H
#define TT_CURVE_ROWS_H

#include "core/view.h"

/* scores float32 [N] / [N, K] and labels (as exact_curve.h's task reads them) receive the kept
 * rows; size int64 [1] how many, or -1 for a declined batch. */
tt_status tt_curve_rows(const tt_view *scores, const tt_view *labels, const tt_view *size,
                        const tt_view *preds, const tt_view *target, int64_t task,
                        const int64_t *ignore_index, int convert, tt_error *err);

#endif /* TT_CURVE_ROWS_H */
