/*
 * lcs.h: the length of the longest common subsequence of token-id sequences, a batch of pairs in
 * one call (ROUGE-L). Contract in csrc/API_TEXT.md ("Text kernels"); kernels/reference/lcs.py is the
 * oracle. `out` is untouched on failure.
 */
#ifndef TT_LCS_H
#define TT_LCS_H

#include "core/view.h"

/* out int64 [P]: out[p] = LCS length of a[a_offsets[p] : a_offsets[p + 1]] and
 * b[b_offsets[p] : b_offsets[p + 1]]. a, b int64 [A], [B]; offsets int64 [P + 1], non-decreasing,
 * from 0 to at most the sequence's length. Memory O(min(m, n)) for the longest pair. */
tt_status tt_lcs(const tt_view *out, const tt_view *a, const tt_view *a_offsets, const tt_view *b,
                 const tt_view *b_offsets, tt_error *err);

#endif /* TT_LCS_H */
