/*
 * cluster_moments.h: per-cluster statistics of embeddings: (count, mean, M2) moments, a batch
 * folded into the rows held so far with the weighted-mean merge (CalinskiHarabaszScore's state,
 * and the centroids of DaviesBouldinScore and DunnIndex), and the distances of samples to their
 * centroids (those two scores' spreads). Contract in csrc/API_CLUSTERING.md ("cluster_moments",
 * "cluster_distances"); kernels/reference/clustering.py is the oracle. The outputs are untouched
 * on failure.
 */
#ifndef TT_CLUSTER_MOMENTS_H
#define TT_CLUSTER_MOMENTS_H

#include "core/view.h"

/* Row layout of a block: float64 [D, rows...], one row per cluster label. The label is split
 * into two halves (hi = floor(label / 2^32), lo = label - hi 2^32), each exact in float64. */
enum { TT_CM_HI, TT_CM_LO, TT_CM_COUNT, TT_CM_M2, TT_CM_MEAN };

/* out float64 [L] (contiguous), size int64 [1]: out[:size] = the block of the clusters of
 * `block` (float64 [0] or [1 + K (4 + D)], rows in any order, labels may repeat) and of the
 * samples data (floating [N, D], any strides, finite) with labels (integer or bool [N]), sorted by
 * label; size 0 when both are empty. L >= 1 + (K + N)(4 + D). */
tt_status tt_cluster_moments(const tt_view *out, const tt_view *size, const tt_view *block,
                             const tt_view *data, const tt_view *labels, tt_error *err);

/* out float64 [K, 2] (contiguous), accumulated: per cluster, the sum and the max of the p-norm
 * distances of its samples (data floating [N, D], any strides; labels integer [N], each one of
 * keys) to its centroid (centroids float64 [K, D], any strides; keys int64 [K] strictly
 * increasing). p >= 0 or inf. The distances DaviesBouldinScore and DunnIndex need. */
tt_status tt_cluster_distances(const tt_view *out, const tt_view *data, const tt_view *labels,
                               const tt_view *keys, const tt_view *centroids, double p,
                               tt_error *err);

#endif /* TT_CLUSTER_MOMENTS_H */
