/*
 * label_counts.h: per (sample, class) overlap counts of two index maps, the state of the
 * segmentation overlap metrics (MeanIoU, DiceScore, GeneralizedDiceScore) for index inputs and
 * for float scores once reduced to their argmax. Contract in csrc/API.md ("Label counts");
 * kernels/reference/label_counts.py is the oracle.
 */
#ifndef TT_LABEL_COUNTS_H
#define TT_LABEL_COUNTS_H

#include "core/view.h"

/* Bits of `from_scores`: the side holds the argmax of float scores, -1 where a pixel's scores
 * held a NaN. */
#define TT_LABELS_PREDS_SCORED 1
#define TT_LABELS_TARGET_SCORED 2

/* out int64 [N, C, 3], C-contiguous, = (pixels where preds and target are both class c, pixels
 * of preds that are c, pixels of target that are c) per sample n and class c, from preds and
 * target: bool or integer [N, P], same shape, any strides. A label outside [0, C) is a
 * ValueError naming preds (looked at first) or target, the sample and the value (a -1 on a side
 * marked in `from_scores`: "NaN in the scores of sample n"); `out` is written only after every
 * label passed. from_scores outside [0, 3] is a ValueError naming it. */
tt_status tt_label_counts(const tt_view *out, const tt_view *preds, const tt_view *target,
                          int64_t from_scores, tt_error *err);

#endif /* TT_LABEL_COUNTS_H */
