/*
 * box_overlap.h: the overlap of axis-aligned boxes: IoU, generalized IoU, distance IoU and
 * complete IoU (torchvision's box_iou, generalized_box_iou, distance_box_iou and
 * complete_box_iou), as a matrix (the functional forms) or summed per target box over the
 * images of a batch (the IoU metrics' update). Contract in csrc/API.md ("Box overlap");
 * kernels/reference/box_overlap.py is the oracle.
 */
#ifndef TT_BOX_OVERLAP_H
#define TT_BOX_OVERLAP_H

#include "core/view.h"

/* What a pair of boxes is scored by. */
typedef enum {
    TT_BOX_IOU = 0,
    TT_BOX_GIOU = 1,
    TT_BOX_DIOU = 2,
    TT_BOX_CIOU = 3,
} tt_box_kind;

/* out float32 or float64, [N, M] (every pair (preds[i], target[j])) or [K] with K <= min(N, M)
 * (the pairs (preds[i], target[i])); preds float [N, 4], target float [M, 4], (x1, y1, x2, y2)
 * with finite values, x1 <= x2 and y1 <= y2. `kind` a tt_box_kind. A pair whose value is 0 / 0
 * (boxes of zero area) gets NaN, as torchvision. `out` is written only after every box passed. */
tt_status tt_box_overlap_matrix(const tt_view *out, const tt_view *preds, const tt_view *target,
                                int64_t kind, tt_error *err);

/* out float64 [T, 2] += (sum, count) of the counted values of each target box. The batch's
 * boxes are concatenated image after image: preds float [P, 4], target float [T, 4], sizes
 * int64 [B, 2] = (predictions, targets) of each image, summing to (P, T). pred_labels [P] and
 * target_labels [T] (both or neither): when given, only pairs of equal labels count. The value
 * of a pair is computed in float unless preds or target is float64 (csrc/API.md); a value below
 * *threshold (rounded alike; NULL: none) does not count, nor one equal to the kind's "no value"
 * marker (-1, or -2 for CIoU), and a counted NaN is an error. An image without predictions
 * counts a 0 for each of its M targets once with labels, M times without. `out` is untouched
 * on failure. */
tt_status tt_box_overlap_sums(const tt_view *out, const tt_view *preds, const tt_view *target,
                              const tt_view *sizes, const tt_view *pred_labels,
                              const tt_view *target_labels, int64_t kind, const double *threshold,
                              tt_error *err);

#endif /* TT_BOX_OVERLAP_H */
