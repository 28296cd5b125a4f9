/*
 * panoptic.h: panoptic quality's per-category sums (IoU of matched segments, true positives,
 * false positives, false negatives) from (category, instance) maps. Contract in csrc/API.md
 * ("Panoptic segment matching"); kernels/reference/panoptic.py is the oracle. The four outputs
 * are untouched on failure.
 */
#ifndef TT_PANOPTIC_H
#define TT_PANOPTIC_H

#include "core/view.h"

/* Kinds of a category (column 1 of `categories`). */
enum {
    TT_PANOPTIC_THING = 0,         /* instances are told apart */
    TT_PANOPTIC_STUFF = 1,         /* one segment per image: the instance id is ignored */
    TT_PANOPTIC_MODIFIED_STUFF = 2 /* a stuff scored by modified PQ's rule */
};

/* iou_sum float64 [C], true_positives / false_positives / false_negatives int64 [C], all
 * C-contiguous: += the sums of the images of preds and target (integer [B, N, 2], the pairs
 * (category id, instance id) of each pixel). categories int64 [C, 2]: (category id, kind) of
 * each output slot, ids distinct. A pixel whose category is not in `categories` is void: an
 * error in preds unless allow_unknown_preds. */
tt_status tt_panoptic_update(const tt_view *iou_sum, const tt_view *true_positives,
                             const tt_view *false_positives, const tt_view *false_negatives,
                             const tt_view *preds, const tt_view *target, const tt_view *categories,
                             int allow_unknown_preds, tt_error *err);

#endif /* TT_PANOPTIC_H */
