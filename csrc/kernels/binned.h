/*
 * binned.h: binned score histograms for ROC / precision-recall curves. Contract in csrc/API.md.
 * Leaves `out` unchanged on failure; `mask` and `ignore_index` may be NULL.
 */
#ifndef TT_BINNED_H
#define TT_BINNED_H

#include "core/view.h"

/* Appended to a multiclass NaN rejection: the curves' device path leaves logits whose softmax is
 * undefined to that check (they come out NaN), so the message names that cause too. */
#define TT_BINNED_NAN_NOTE                                                                         \
    " (a NaN score, or a row of logits whose softmax is undefined: a logit of +inf, or every "     \
    "logit -inf)"

/* out int64 [K, T + 1, 2]: out[k, #{i : thresholds[i] <= score}, is_positive] += 1.
 * preds [N] with target [N] in {0,1} (K = 1); preds [N, C] with target labels [N] (one-vs-rest,
 * K = C); preds [N, L] with target [N, L] in {0,1} (K = L). thresholds float64 [T], sorted. */
tt_status tt_binned_update(const tt_view *out, const tt_view *preds, const tt_view *target,
                           const tt_view *mask, const int64_t *ignore_index,
                           const tt_view *thresholds, int uniform, tt_error *err);

#endif /* TT_BINNED_H */
