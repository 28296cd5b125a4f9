/*
 * argmax.h: the argmax of each row of float scores, for confmat_scores (confmat.c): the first
 * index on ties, as torch.argmax. Plain C over a validated tt_view.
 */
#ifndef TT_ARGMAX_H
#define TT_ARGMAX_H

#include "core/view.h"

/* dst[i] = argmax of row start + i of s (float16, bfloat16, float32 or float64 [N, C], C >= 1,
 * any strides) for i in [0, n). Returns the offset (from start) of the first row holding a NaN,
 * with the rows before it filled; or -1 when there is none. float16, bfloat16 and float32
 * compare exactly in float. */
int64_t tt_argmax_rows(const tt_view *s, int64_t start, int64_t n, int64_t *dst);

#endif /* TT_ARGMAX_H */
