/*
 * coco_match.h: COCO's per-image matching of detections to ground truths (pycocotools'
 * COCOeval.evaluateImg at every IoU threshold and area range), written as the packed outcome
 * words of MeanAveragePrecision's detection rows. Contract in csrc/API.md ("COCO matching");
 * kernels/reference/coco_match.py is the oracle. `rows` is untouched on failure.
 */
#ifndef TT_COCO_MATCH_H
#define TT_COCO_MATCH_H

#include "core/view.h"

/* rows int32 [D, 2 + 2W] (W = ceil(T / 10)): columns 2.. receive W little-endian uint64 words
 * as (low, high) int32 pairs; columns 0 and 1 are left as they are. groups int64 [P, 4]:
 * (det_start, det_end, gt_start, gt_end) of each (image, label) group, the ranges tiling
 * [0, D) and [0, G) in order; detections of a group in rank order (score descending).
 * dets float64 [D, 5]: x, y, w, h, area; gts float64 [G, 6]: x, y, w, h, area, crowd (0/1).
 * iou_thresholds float64 [T], T >= 1. ious: NULL (IoUs from the boxes, as pycocotools' bbIou)
 * or float64 [S], S = sum of the groups' D_p * G_p, block p [D_p, G_p] row-major. */
tt_status tt_coco_match(const tt_view *rows, const tt_view *groups, const tt_view *dets,
                        const tt_view *gts, const tt_view *iou_thresholds, const tt_view *ious,
                        tt_error *err);

#endif /* TT_COCO_MATCH_H */
