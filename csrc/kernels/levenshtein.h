/*
 * levenshtein.h: the edit distance of each pair of token sequences in a batch (the text
 * metrics' word and character error rates, EditDistance). Contract in csrc/API_TEXT.md ("Edit
 * distance"); kernels/reference/levenshtein.py is the oracle. `out` is untouched on failure.
 */
#ifndef TT_LEVENSHTEIN_H
#define TT_LEVENSHTEIN_H

#include "core/view.h"

/* out int64 [N] = the Levenshtein distance of each pair: pair i is the hypothesis
 * tokens[offsets[2i] : offsets[2i+1]] against the reference tokens[offsets[2i+1] : offsets[2i+2]].
 * tokens int32 or int64 [T], contiguous (tokens compare by value only); offsets int64 [2N + 1],
 * contiguous, non-decreasing, within [0, T]. Insertion and deletion cost 1, a substitution
 * `substitution_cost` (>= 0), a match 0. */
tt_status tt_levenshtein(const tt_view *out, const tt_view *tokens, const tt_view *offsets,
                         int64_t substitution_cost, tt_error *err);

#endif /* TT_LEVENSHTEIN_H */
