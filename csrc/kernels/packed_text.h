/*
 * packed_text.h: the packed sentences the text kernels read (ter.c, eed.c). N sentences as
 * int64 1-D tensors: hyp (every hypothesis' tokens) cut by hyp_offsets [N + 1], refs (every
 * reference's tokens) cut by ref_offsets [M + 1], and groups [N + 1] giving sentence i the
 * references groups[i]..groups[i + 1] - 1 (at least one). Contract in csrc/API_TEXT.md
 * ("Translation edit rate"); kernels/reference/packed_text.py is the oracle of the checks.
 */
#ifndef TT_PACKED_TEXT_H
#define TT_PACKED_TEXT_H

#include "core/view.h"

typedef struct {
    int64_t sentences;          /* N */
    const int64_t *hyp;         /* tokens of every hypothesis */
    const int64_t *hyp_offsets; /* [N + 1] */
    const int64_t *refs;        /* tokens of every reference */
    const int64_t *ref_offsets; /* [M + 1] */
    const int64_t *groups;      /* [N + 1] */
} tt_packed_text;

/* Checks the five packed tensors and out (float64 [N, out_cols], or [N] when out_cols is 0),
 * in the reference's order, and fills *text. Nothing is written to out. */
tt_status tt_packed_text_check(const tt_view *out, int out_cols, const tt_view *hyp,
                               const tt_view *hyp_offsets, const tt_view *refs,
                               const tt_view *ref_offsets, const tt_view *groups,
                               tt_packed_text *text, tt_error *err);

#endif /* TT_PACKED_TEXT_H */
