/*
 * confmat.h: confusion-matrix accumulation (int64 counts, out[target, prediction]).
 * Contract in csrc/API.md. Every function validates its arguments, returns TT_OK or a status
 * with `err` filled, and leaves `out` exactly as it was when it fails.
 * `mask` may be NULL; `ignore_index` may be NULL (no ignored label).
 */
#ifndef TT_CONFMAT_H
#define TT_CONFMAT_H

#include "core/view.h"

/* out int64 [C, C]; preds, target labels [N] in [0, C). */
tt_status tt_confmat_labels(const tt_view *out, const tt_view *preds, const tt_view *target,
                            const tt_view *mask, const int64_t *ignore_index, tt_error *err);

/* out int64 [C, C]; preds float [N, C] (argmax, first index on ties); target labels [N]. */
tt_status tt_confmat_scores(const tt_view *out, const tt_view *preds, const tt_view *target,
                            const tt_view *mask, const int64_t *ignore_index, tt_error *err);

/* Binary / multilabel. preds [N] or [N, L]: float (prediction = preds > threshold) or labels in
 * {0, 1}; target labels in {0, 1} of the same shape; out int64 [L, 2, 2] (or [2, 2] for 1-D).
 * With a non-NULL `logit_threshold`, float preds are compared against `threshold` when every
 * element of preds lies in [0, 1] (probabilities), else against *logit_threshold (logits). */
tt_status tt_confmat_threshold(const tt_view *out, const tt_view *preds, const tt_view *target,
                               const tt_view *mask, const int64_t *ignore_index, double threshold,
                               const double *logit_threshold, tt_error *err);

#endif /* TT_CONFMAT_H */
