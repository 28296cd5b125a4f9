/*
 * eed.h: the extended edit distance (EED; Stanchev, Wang and Ney, WMT 2019) per sentence, on
 * character codes, as torchmetrics and the authors' script compute it. Contract in csrc/API_TEXT.md
 * ("Extended edit distance"); kernels/reference/eed.py is the oracle. `out` is untouched on
 * failure.
 */
#ifndef TT_EED_H
#define TT_EED_H

#include "core/view.h"

/* out float64 [N] = per sentence the lowest EED over its references; costs float64 [4] =
 * (alpha, rho, deletion, insertion), finite and >= 0; the packed sentences as packed_text.h
 * describes them (tokens: character codes, 32 a space). */
tt_status tt_eed_sentences(const tt_view *out, const tt_view *hyp, const tt_view *hyp_offsets,
                           const tt_view *refs, const tt_view *ref_offsets, const tt_view *groups,
                           const tt_view *costs, tt_error *err);

#endif /* TT_EED_H */
