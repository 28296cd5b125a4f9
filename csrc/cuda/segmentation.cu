/*
 * segmentation.cu: the segmentation overlap counts on the GPU, the CUDA twins of
 * kernels/label_counts.c, kernels/mask_counts.c and kernels/class_argmax.c (contracts in
 * csrc/API.md). The workload: one launch per validation batch of N images of P pixels (e.g.
 * 16 x 512 x 512) and a few to a few hundred classes; memory bound.
 *
 * These kernels count into a scratch `out` (zeroed on the stream) and report a bad element by
 * lowering the int64 `status` (INT64_MAX when clean) to its key with atomicMin, so the lowest
 * key, the CPU core's first bad element, wins:
 *   label_counts  key = side * N * P + n * P + p    (side 0 preds, 1 target; -1 included)
 *   mask_counts   key = side * N * C + n * C + c    (the (sample, class) mask holding it)
 * The caller gates what it adds to its state on status (the launches are segmentation.c's).
 *
 * Grids: y strides over samples (label, class_argmax) or (sample, class) masks, x over pixels.
 */
#include "cuda/common.cuh"

__device__ __forceinline__ void lower_status(long long *status, long long key)
{
    if (key < *(volatile long long *)status) /* a plain read first: bad batches stay cheap */
        atomicMin(status, key);
}

/* ---- label counts ------------------------------------------------------------------------- */

/* Sample rows of per-class (intersection, preds, target) counters, uint32 in shared memory
 * (one block counts at most P / gridDim.x < 2^31 pixels of a row), flushed once per row. */
template <bool SHARED>
__device__ __forceinline__ void label_counts_body(const tt_segment_args &a)
{
    TT_DYNAMIC_SHARED(unsigned, sh);
    const int64_t bins = 3 * a.classes, total = a.samples * a.pixels;
    for (int64_t n = blockIdx.y; n < a.samples; n += gridDim.y) {
        long long *out = a.out + n * bins;
        if (SHARED)
            tt_hist_zero(sh, bins);
        const char *prow = a.preds.data + n * a.preds.rstep;
        const char *trow = a.target.data + n * a.target.rstep;
        for (int64_t p = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; p < a.pixels;
             p += (int64_t)gridDim.x * blockDim.x) {
            const int64_t x = tt_ld_label(prow + p * a.preds.cstep, a.preds.dtype);
            const int64_t y = tt_ld_label(trow + p * a.target.cstep, a.target.dtype);
            if ((uint64_t)x >= (uint64_t)a.classes) {
                lower_status(a.status, n * a.pixels + p);
                continue;
            }
            if ((uint64_t)y >= (uint64_t)a.classes) {
                lower_status(a.status, total + n * a.pixels + p);
                continue;
            }
            if (x == y)
                tt_count<SHARED>(sh, out, 3 * x, 1);
            tt_count<SHARED>(sh, out, 3 * x + 1, 1);
            tt_count<SHARED>(sh, out, 3 * y + 2, 1);
        }
        if (SHARED) {
            tt_hist_flush(sh, out, bins, 1);
            __syncthreads(); /* the next row's zeroing waits for this flush */
        }
    }
}

TT_KERNEL(tt_label_counts_shared)(tt_segment_args a) { label_counts_body<true>(a); }
TT_KERNEL(tt_label_counts_global)(tt_segment_args a) { label_counts_body<false>(a); }

/* ---- mask counts -------------------------------------------------------------------------- */

/* The block's sums of three per-thread counters, added into out[0..3) by thread 0. */
__device__ __forceinline__ void add_block_sums(unsigned long long c[3], long long *out)
{
    __shared__ unsigned long long warp_sums[TT_THREADS / 32][3];
    for (int k = 0; k < 3; k++)
        for (int d = 16; d > 0; d >>= 1)
            c[k] += __shfl_down_sync(TT_FULL_MASK, c[k], d);
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0)
        for (int k = 0; k < 3; k++)
            warp_sums[warp][k] = c[k];
    __syncthreads();
    if (threadIdx.x == 0) {
        for (int k = 0; k < 3; k++) {
            unsigned long long s = 0;
            for (int w = 0; w < (int)(blockDim.x >> 5); w++)
                s += warp_sums[w][k];
            if (s != 0)
                atomicAdd((unsigned long long *)&out[k], s);
        }
    }
    __syncthreads(); /* warp_sums is reused by the next mask */
}

TT_KERNEL(tt_mask_counts)(tt_segment_args a)
{
    const int64_t masks = a.samples * a.classes;
    for (int64_t q = blockIdx.y; q < masks; q += gridDim.y) {
        const int64_t n = q / a.classes, c = q - n * a.classes;
        const char *prow = a.preds.data + n * a.preds.rstep + c * a.preds_class_step;
        const char *trow = a.target.data + n * a.target.rstep + c * a.target_class_step;
        unsigned long long counts[3] = {0, 0, 0};
        int bad_p = 0, bad_t = 0;
        for (int64_t p = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; p < a.pixels;
             p += (int64_t)gridDim.x * blockDim.x) {
            const int64_t x = tt_ld_label(prow + p * a.preds.cstep, a.preds.dtype);
            const int64_t y = tt_ld_label(trow + p * a.target.cstep, a.target.dtype);
            bad_p |= (uint64_t)x > 1;
            bad_t |= (uint64_t)y > 1;
            counts[0] += (unsigned long long)(x & y & 1);
            counts[1] += (unsigned long long)(x & 1);
            counts[2] += (unsigned long long)(y & 1);
        }
        if (bad_p)
            lower_status(a.status, q);
        else if (bad_t)
            lower_status(a.status, masks + q);
        add_block_sums(counts, a.out + 3 * q);
    }
}

/* ---- class argmax ------------------------------------------------------------------------- */

/* A thread per pixel walks the C maps in order: the first strictly greater score wins (ties
 * to the lowest class, 0 when every score is -inf), -1 when one of them is NaN. Neighbouring
 * threads read neighbouring pixels of one map. Scores compare as doubles: exact for every
 * score dtype. */
TT_KERNEL(tt_class_argmax)(tt_class_argmax_args a)
{
    const int64_t rows = a.scores.rows, pixels = a.scores.cols;
    for (int64_t n = blockIdx.y; n < rows; n += gridDim.y) {
        const char *row = a.scores.data + n * a.scores.rstep;
        for (int64_t p = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; p < pixels;
             p += (int64_t)gridDim.x * blockDim.x) {
            const char *at = row + p * a.scores.cstep;
            double best = -INFINITY;
            long long best_c = 0;
            bool nan = false;
            for (int64_t c = 0; c < a.classes; c++, at += a.class_step) {
                const double v = tt_ld_score(at, a.scores.dtype);
                nan |= v != v;
                if (v > best) {
                    best = v;
                    best_c = c;
                }
            }
            a.out[n * pixels + p] = nan ? -1 : best_c;
        }
    }
}
