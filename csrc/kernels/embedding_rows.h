/*
 * embedding_rows.h: reading rows of embeddings (floating [N, D], any strides) in chunks widened to
 * double with a finiteness flag, and the squared distance of two rows; shared by the clustering
 * kernels (cluster_moments.c, cluster_distances.c).
 */
#ifndef TT_EMBEDDING_ROWS_H
#define TT_EMBEDDING_ROWS_H

#include <stdint.h>

#include "core/view.h"

/* Rows of data per chunk: at most TT_CHUNK (the label chunk) and about 32 KB of doubles. Inline,
 * so that the callers (and the static analyser) see the bound. */
static inline int64_t tt_embedding_chunk_rows(int64_t d)
{
    return d >= 4096 ? 1 : (4096 / (d > 0 ? d : 1) < TT_CHUNK ? 4096 / (d > 0 ? d : 1) : TT_CHUNK);
}

/* Rows start..start+m of data widened to double into x[m * d] (row-major); 0 when a value is not
 * finite. */
int tt_load_embedding_rows(const tt_view *data, int64_t start, int64_t m, int64_t d, double *x);

/* sum over j of (x[j] - c[j])^2. */
double tt_squared_distance(const double *x, const double *c, int64_t d);

#endif /* TT_EMBEDDING_ROWS_H */
