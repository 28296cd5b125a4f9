/*
 * ter.h: Tercom's translation edit rate per sentence (sacrebleu's TER): greedy shifts of
 * hypothesis word spans and a beam-limited word edit distance, on token ids. Contract in
 * csrc/API_TEXT.md ("Translation edit rate"); kernels/reference/ter.py is the oracle. `out` is
 * untouched on failure.
 */
#ifndef TT_TER_H
#define TT_TER_H

#include "core/view.h"

/* out float64 [N, 2] = per sentence (fewest edits over its references, average reference
 * length); the packed sentences as packed_text.h describes them. */
tt_status tt_ter_sentences(const tt_view *out, const tt_view *hyp, const tt_view *hyp_offsets,
                           const tt_view *refs, const tt_view *ref_offsets, const tt_view *groups,
                           tt_error *err);

#endif /* TT_TER_H */
