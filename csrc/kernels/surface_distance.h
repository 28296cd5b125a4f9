/*
 * surface_distance.h: the Hausdorff distance between the edges of two 2-D binary masks, for
 * every (sample, class) pair of a batch in one call (torchmetrics' hausdorff_distance: edges by
 * erosion with a cross, distances euclidean, chessboard or taxicab with a pixel spacing).
 * Contract in csrc/API.md ("Surface distance"); kernels/reference/surface_distance.py is the
 * oracle.
 */
#ifndef TT_SURFACE_DISTANCE_H
#define TT_SURFACE_DISTANCE_H

#include "core/view.h"

/* How the distance of two pixels is measured (dr, dc: the row and column offsets times the
 * spacing). */
typedef enum {
    TT_SURFACE_EUCLIDEAN = 0,  /* sqrt(dr^2 + dc^2) */
    TT_SURFACE_CHESSBOARD = 1, /* max(dr, dc) */
    TT_SURFACE_TAXICAB = 2,    /* dr + dc */
} tt_surface_metric;

/* out float64 [N, C], C-contiguous: per pair, the (directed: from preds' edges to target's)
 * Hausdorff distance between the edge pixels of preds[n, c] and target[n, c] (bool or integer
 * [N, C, H, W], same shape, any strides; a nonzero value is inside the mask). An edge pixel is
 * a mask pixel with one of its 4 neighbours outside the mask or the image. Both masks empty:
 * NaN; one empty: inf. row_spacing and col_spacing positive and finite. Every check runs before
 * `out` is written. */
tt_status tt_surface_distance(const tt_view *out, const tt_view *preds, const tt_view *target,
                              int64_t metric, double row_spacing, double col_spacing, int directed,
                              tt_error *err);

#endif /* TT_SURFACE_DISTANCE_H */
