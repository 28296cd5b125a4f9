/*
 * mask_counts.h: per (sample, class) overlap counts of two stacks of 0/1 masks, the state of
 * the segmentation overlap metrics (MeanIoU, DiceScore, GeneralizedDiceScore) for one-hot
 * inputs. Contract in csrc/API.md ("Mask counts"); kernels/reference/mask_counts.py is the
 * oracle.
 */
#ifndef TT_MASK_COUNTS_H
#define TT_MASK_COUNTS_H

#include "core/view.h"

/* out int64 [N, C, 3], C-contiguous, = (|preds & target|, |preds|, |target|) of each mask pair
 * preds[n, c], target[n, c] (bool or integer [N, C, P], same shape, any strides). A value other
 * than 0 and 1 is a ValueError naming preds (looked at first) or target, with the sample and
 * class of the first one; `out` is written only after every value passed. */
tt_status tt_mask_counts(const tt_view *out, const tt_view *preds, const tt_view *target,
                         tt_error *err);

#endif /* TT_MASK_COUNTS_H */
