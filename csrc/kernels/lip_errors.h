/*
 * lip_errors.h: LipVertexError's batch statistic in one strided pass: the sum over frames of the
 * largest squared distance between predicted and true lip vertices. Contract in
 * csrc/API_MULTIMODAL.md ("lip_errors"); kernels/reference/lip_errors.py is the oracle. out is
 * untouched on failure.
 */
#ifndef TT_LIP_ERRORS_H
#define TT_LIP_ERRORS_H

#include "core/view.h"

/* out float64 0-d += sum over the first min(T, T') frames t of max over l of
 * sum_c (gt[t, lips[l], c] - pred[t, lips[l], c])^2, in double, of pred [T, V, C] and
 * gt [T', V, C] (floating, any dtype each, any strides) and lips (integer [L], each in [0, V)).
 * A NaN or infinite value at a lip vertex of a counted frame is a ValueError naming the tensor
 * (pred's first). L = 0 or no frame adds 0. */
tt_status tt_lip_errors(const tt_view *out, const tt_view *pred, const tt_view *gt,
                        const tt_view *lips, tt_error *err);

#endif /* TT_LIP_ERRORS_H */
