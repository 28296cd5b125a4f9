/*
 * enqueue_moments.c: the launches of the moments kernels (cuda_api.h, kernels in moments.cu):
 * the two-level reduction's geometry (blockDim.x columns by blockDim.y rows, both powers of
 * two; about four blocks per SM along the rows), its scratch, and the gated merge.
 */
#include "cuda/cuda_api.h"

#define MAX_ROW_BLOCKS 1024

typedef struct {
    unsigned bx, by, gx, gy;
} geometry;

static geometry geometry_of(int device, int64_t rows, int64_t columns)
{
    geometry g;
    unsigned bx = 1;
    while (bx < 32 && (int64_t)bx < columns)
        bx <<= 1;
    const unsigned by = TT_THREADS / bx;
    const int64_t gx = (columns + bx - 1) / bx;
    int64_t gy = (rows + by - 1) / by;
    const int64_t want = ((int64_t)tt_sm_count(device) * 4 + gx - 1) / gx;
    if (gy > want)
        gy = want;
    if (gy > MAX_ROW_BLOCKS)
        gy = MAX_ROW_BLOCKS;
    if (gy < 1)
        gy = 1;
    g.bx = bx;
    g.by = by;
    g.gx = (unsigned)gx;
    g.gy = (unsigned)gy;
    return g;
}

size_t tt_cuda_moments_scratch_bytes(int64_t rows, int64_t columns, int device)
{
    const geometry g = geometry_of(device, rows, columns);
    return (size_t)g.gy * (size_t)(columns > 0 ? columns : 1) * sizeof(tt_row6);
}

static tt_cu_result launch_batch(int co, const tt_view *x, const tt_view *second, int64_t columns,
                                 double *scratch, double *batch, tt_cuda_record *rec,
                                 const tt_cuda_queue *q)
{
    const int64_t rows = x->shape[0];
    if (rows == 0 || columns == 0)
        return TT_CU_SUCCESS;
    const geometry g = geometry_of(q->device, rows, columns);
    tt_partial_args p;
    memset(&p, 0, sizeof p);
    p.x = tt_dview_of(x);
    p.second = tt_dview_of(second); /* [N]: one column, cstep 0 */
    p.columns = columns;
    p.partials = (tt_row6 *)scratch;
    p.rec = rec;
    tt_cu_result r = tt_launch(q, co ? TT_K_COMOMENTS_PARTIAL : TT_K_MOMENTS_PARTIAL, g.gx, g.gy,
                               g.bx, g.by, 0, &p);
    if (r != TT_CU_SUCCESS)
        return r;
    tt_finalize_args f = {(const tt_row6 *)scratch, g.gy, columns, (tt_row6 *)batch};
    const unsigned blocks = (unsigned)((columns + TT_THREADS - 1) / TT_THREADS);
    return tt_launch(q, co ? TT_K_COMOMENTS_FINALIZE : TT_K_MOMENTS_FINALIZE, blocks, 1, TT_THREADS,
                     1, 0, &f);
}

tt_cu_result tt_cuda_moments_batch_launch(const tt_view *x, const tt_view *weights, int64_t columns,
                                          double *scratch, double *batch, tt_cuda_record *rec,
                                          const tt_cuda_queue *q)
{
    return launch_batch(0, x, weights, columns, scratch, batch, rec, q);
}

tt_cu_result tt_cuda_comoments_batch_launch(const tt_view *x, const tt_view *y, int64_t columns,
                                            double *scratch, double *batch, tt_cuda_record *rec,
                                            const tt_cuda_queue *q)
{
    return launch_batch(1, x, y, columns, scratch, batch, rec, q);
}

static tt_cu_result launch_merge(int co, const tt_view *state, const tt_view *other,
                                 const tt_cuda_record *gate, const tt_cuda_queue *q)
{
    const int64_t rows = state->shape[0];
    if (rows == 0)
        return TT_CU_SUCCESS;
    tt_merge_args a = {(double *)state->data, tt_dview_of(other), rows, gate};
    const unsigned blocks = (unsigned)((rows + TT_THREADS - 1) / TT_THREADS);
    return tt_launch(q, co ? TT_K_COMOMENTS_MERGE : TT_K_MOMENTS_MERGE, blocks, 1, TT_THREADS, 1, 0,
                     &a);
}

tt_cu_result tt_cuda_moments_merge_launch(const tt_view *state, const tt_view *other,
                                          const tt_cuda_record *gate, const tt_cuda_queue *q)
{
    return launch_merge(0, state, other, gate, q);
}

tt_cu_result tt_cuda_comoments_merge_launch(const tt_view *state, const tt_view *other,
                                            const tt_cuda_record *gate, const tt_cuda_queue *q)
{
    return launch_merge(1, state, other, gate, q);
}
