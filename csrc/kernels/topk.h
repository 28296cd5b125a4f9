/*
 * topk.h: top-k hit counts per class, for top-k accuracy and top-k stat scores.
 * Contract in csrc/API.md. `out` is untouched on failure.
 */
#ifndef TT_TOPK_H
#define TT_TOPK_H

#include "core/view.h"

/* out int64 [C, 3]: (times the class is a sample's prediction: its target on a hit, else its
 * best class; hits of the target class; target support).
 * preds float [N, C]; target labels [N] in [0, C); 1 <= k <= C. */
tt_status tt_topk_update(const tt_view *out, const tt_view *preds, const tt_view *target,
                         const tt_view *mask, const int64_t *ignore_index, int64_t k,
                         tt_error *err);

#endif /* TT_TOPK_H */
