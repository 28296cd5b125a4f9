/*
 * coco_accumulate.h: COCO's accumulate (pycocotools' COCOeval.accumulate) from the compact
 * per-detection and per-ground-truth rows that MeanAveragePrecision keeps. Contract in
 * csrc/API.md ("COCO accumulate"); kernels/reference/coco_accumulate.py is the oracle.
 */
#ifndef TT_COCO_ACCUMULATE_H
#define TT_COCO_ACCUMULATE_H

#include "core/view.h"

/* precision and scores float64 [T, R, K, 4*M], recall float64 [T, K, 4*M] (area-major: column
 * a*M + m), all contiguous and wholly written; detections int32 [N, 2 + 2*ceil(T/10)];
 * groundtruths int32 [G, 2]; labels int64 [K] strictly ascending, holding every label of the
 * rows; rec_thresholds float64 [R]. Nothing is written on failure. */
tt_status tt_coco_accumulate(const tt_view *precision, const tt_view *recall, const tt_view *scores,
                             const tt_view *detections, const tt_view *groundtruths,
                             const tt_view *labels, const tt_view *rec_thresholds, tt_error *err);

#endif /* TT_COCO_ACCUMULATE_H */
