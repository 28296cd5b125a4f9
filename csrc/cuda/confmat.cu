/*
 * confmat.cu: confusion matrices on the GPU, the CUDA twin of kernels/confmat.c (contract in
 * csrc/API.md): from labels, from scores (argmax fused into the read) and from thresholded
 * scores (binary, multilabel). The workload is one launch per validation batch, N up to
 * millions, C up to thousands; the scores kernel is the bandwidth-bound one.
 *
 * Counts go to a per-block histogram in shared memory when the matrix fits (C <= 110 for
 * [C, C]), flushed with one global atomic per non-zero bin; larger matrices take global atomics
 * directly, which spread over C^2 addresses and rarely collide. A bad sample is skipped and
 * reported into the error record (common.cuh); `sign` -1 replays a call to undo it.
 *
 * The launches, which choose among these variants, are enqueue_count.c's.
 *
 * Argmax of [N, C] scores: a warp per row for C > 16 (lanes read 16-byte vectors when rows are
 * contiguous and aligned, with several loads in flight per lane), a thread per row for small C
 * or column-major scores. Ties go to the lowest index, as torch.argmax.
 */
#include "cuda/common.cuh"

/* The label checks of the CPU walk for a sample whose prediction is known, then the count. */
template <bool SHARED>
__device__ __forceinline__ void count_sample(const tt_labels_args &a, unsigned *sh, int64_t row,
                                             int64_t pred)
{
    if (!tt_ld_keep(a.mask, row))
        return;
    const int64_t t = tt_ld_label(a.target.data + row * a.target.rstep, a.target.dtype);
    if (a.has_ignore && t == a.ignore)
        return;
    if ((uint64_t)t >= (uint64_t)a.classes) {
        tt_report(a.rec, TT_CUDA_KEY(row, TT_CODE_TARGET));
        return;
    }
    if ((uint64_t)pred >= (uint64_t)a.classes) {
        tt_report(a.rec, TT_CUDA_KEY(row, TT_CODE_PREDS));
        return;
    }
    tt_count<SHARED>(sh, a.out, t * a.classes + pred, a.sign);
}

/* ---- from labels -------------------------------------------------------------------------- */

template <bool SHARED>
__device__ __forceinline__ void confmat_labels_body(const tt_labels_args &a)
{
    if (tt_nothing_to_undo(a.gate))
        return; /* an undo replay of a call that had no error */
    TT_DYNAMIC_SHARED(unsigned, sh);
    const int64_t bins = a.classes * a.classes;
    if (SHARED)
        tt_hist_zero(sh, bins);
    const int64_t n = a.target.rows, stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        if (!tt_ld_keep(a.mask, i))
            continue; /* count_sample checks again: cheap, and keeps one copy of the rules */
        const int64_t p = tt_ld_label(a.preds.data + i * a.preds.rstep, a.preds.dtype);
        count_sample<SHARED>(a, sh, i, p);
    }
    if (SHARED)
        tt_hist_flush(sh, a.out, bins, a.sign);
}

/* ---- from scores: argmax fused ------------------------------------------------------------ */

/* One lane's running maximum. A lane visits its columns in increasing order, so keeping the
 * first strictly greater value gives its lowest index among ties, branch-free; a lane that saw
 * only -inf (or nothing) keeps the sentinel index, which loses every tie in the warp merge. */
template <typename A>
__device__ __forceinline__ void consider(A v, int64_t j, A &best, int64_t &best_j, int &nan)
{
    nan |= v != v;
    const bool take = v > best;
    best = take ? v : best;
    best_j = take ? j : best_j;
}

/* The sentinel survives only when every score of the row is -inf: torch.argmax says 0. */
__device__ __forceinline__ int64_t argmax_index(int64_t best_j)
{
    return best_j == INT64_MAX ? 0 : best_j;
}

#define LOADS_IN_FLIGHT 4

template <typename T, bool SHARED>
__device__ __forceinline__ void confmat_scores_warp_body(const tt_labels_args &a)
{
    if (tt_nothing_to_undo(a.gate))
        return; /* an undo replay of a call that had no error */
    typedef typename tt_score<T>::acc acc;
    const int per = 16 / (int)sizeof(T); /* elements per 16-byte vector */
    TT_DYNAMIC_SHARED(unsigned, sh);
    const int64_t classes = a.classes, bins = classes * classes;
    if (SHARED)
        tt_hist_zero(sh, bins);
    const int lane = threadIdx.x & 31;
    const int64_t warps = ((int64_t)gridDim.x * blockDim.x) >> 5;
    const int64_t nvec = a.vectorised ? classes / per : 0;

    for (int64_t row = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5; row < a.preds.rows;
         row += warps) {
        const char *p = a.preds.data + row * a.preds.rstep;
        const uint4 *vp = (const uint4 *)p;
        acc best = -INFINITY;
        int64_t best_j = INT64_MAX;
        int nan = 0;
        int64_t v = lane;
        for (; v + 32 * (LOADS_IN_FLIGHT - 1) < nvec; v += 32 * LOADS_IN_FLIGHT) {
            uint4 q[LOADS_IN_FLIGHT];
#pragma unroll
            for (int u = 0; u < LOADS_IN_FLIGHT; u++)
                q[u] = __ldcs(vp + v + 32 * u); /* streamed: read once, keep L2 for the counts */
#pragma unroll
            for (int u = 0; u < LOADS_IN_FLIGHT; u++) {
                const T *vals = reinterpret_cast<const T *>(&q[u]);
#pragma unroll
                for (int e = 0; e < per; e++)
                    consider<acc>(tt_score<T>::at(&vals[e]), (v + 32 * u) * per + e, best, best_j,
                                  nan);
            }
        }
        for (; v < nvec; v += 32) {
            const uint4 q = __ldcs(vp + v);
            const T *vals = reinterpret_cast<const T *>(&q);
#pragma unroll
            for (int e = 0; e < per; e++)
                consider<acc>(tt_score<T>::at(&vals[e]), v * per + e, best, best_j, nan);
        }
        for (int64_t j = nvec * per + lane; j < classes; j += 32)
            consider<acc>(tt_score<T>::at(p + j * a.preds.cstep), j, best, best_j, nan);

        for (int offset = 16; offset > 0; offset >>= 1) {
            const acc other = __shfl_down_sync(TT_FULL_MASK, best, offset);
            const int64_t other_j = __shfl_down_sync(TT_FULL_MASK, best_j, offset);
            if (other > best || (other == best && other_j < best_j)) {
                best = other;
                best_j = other_j;
            }
        }
        nan = __any_sync(TT_FULL_MASK, nan);
        if (lane == 0) {
            if (nan) /* an error even in a masked or ignored sample, as on the CPU */
                tt_report(a.rec, TT_CUDA_KEY(row, TT_CODE_NAN));
            else
                count_sample<SHARED>(a, sh, row, argmax_index(best_j));
        }
    }
    if (SHARED)
        tt_hist_flush(sh, a.out, bins, a.sign);
}

template <typename T, bool SHARED>
__device__ __forceinline__ void confmat_scores_thread_body(const tt_labels_args &a)
{
    if (tt_nothing_to_undo(a.gate))
        return; /* an undo replay of a call that had no error */
    typedef typename tt_score<T>::acc acc;
    TT_DYNAMIC_SHARED(unsigned, sh);
    const int64_t classes = a.classes, bins = classes * classes;
    if (SHARED)
        tt_hist_zero(sh, bins);
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t row = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; row < a.preds.rows;
         row += stride) {
        const char *p = a.preds.data + row * a.preds.rstep;
        acc best = -INFINITY;
        int64_t best_j = INT64_MAX;
        int nan = 0;
        for (int64_t j = 0; j < classes; j++)
            consider<acc>(tt_score<T>::at(p + j * a.preds.cstep), j, best, best_j, nan);
        if (nan)
            tt_report(a.rec, TT_CUDA_KEY(row, TT_CODE_NAN));
        else
            count_sample<SHARED>(a, sh, row, argmax_index(best_j));
    }
    if (SHARED)
        tt_hist_flush(sh, a.out, bins, a.sign);
}

/* ---- thresholded: binary and multilabel --------------------------------------------------- */

template <bool SHARED>
__device__ __forceinline__ void confmat_threshold_body(const tt_threshold_args &a)
{
    if (tt_nothing_to_undo(a.gate))
        return; /* an undo replay of a call that had no error */
    TT_DYNAMIC_SHARED(unsigned, sh);
    const int64_t cols = a.preds.cols, total = a.preds.rows * cols, bins = 4 * cols;
    if (SHARED)
        tt_hist_zero(sh, bins);
    /* the count and its undo replay read the same chosen threshold */
    const double threshold = a.threshold_at != NULL ? *a.threshold_at : a.threshold;
    const int64_t stride = (int64_t)gridDim.x * blockDim.x,
                  first = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    tt_walk w = tt_walk_start(first, stride, cols);
    for (int64_t e = first; e < total; e += stride, tt_walk_next(w)) {
        const int64_t row = w.row, col = w.col;
        const char *pp = a.preds.data + row * a.preds.rstep + col * a.preds.cstep;
        int64_t p = 0;
        if (a.float_preds) {
            /* exact: every score dtype converts to double without rounding */
            const double s = tt_ld_score(pp, a.preds.dtype);
            if (s != s) {
                tt_report(a.rec, TT_CUDA_KEY(e, TT_CODE_NAN));
                continue;
            }
            p = s > threshold;
        }
        if (!tt_ld_keep(a.mask, row))
            continue;
        const int64_t t = tt_ld_label(a.target.data + row * a.target.rstep + col * a.target.cstep,
                                      a.target.dtype);
        if (a.has_ignore && t == a.ignore)
            continue;
        if (!a.float_preds)
            p = tt_ld_label(pp, a.preds.dtype);
        if ((uint64_t)t > 1) {
            tt_report(a.rec, TT_CUDA_KEY(e, TT_CODE_TARGET));
            continue;
        }
        if ((uint64_t)p > 1) {
            tt_report(a.rec, TT_CUDA_KEY(e, TT_CODE_PREDS));
            continue;
        }
        tt_count<SHARED>(sh, a.out, col * 4 + t * 2 + p, a.sign);
    }
    if (SHARED)
        tt_hist_flush(sh, a.out, bins, a.sign);
}

/* Probabilities or logits: does every element of preds lie in [0, 1]? Each block ors its
 * verdict into counters[0]; the last block to finish (counters[1], after a fence) writes the
 * chosen threshold. No host read: the threshold kernels after it on the stream read *chosen. */
TT_KERNEL(tt_threshold_pick)(tt_pick_args a)
{
    const tt_dview &preds = a.preds;
    const int64_t cols = preds.cols, total = preds.rows * cols;
    const int64_t stride = (int64_t)gridDim.x * blockDim.x,
                  first = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    int outside = 0;
    tt_walk w = tt_walk_start(first, stride, cols);
    for (int64_t e = first; e < total; e += stride, tt_walk_next(w)) {
        const double s =
            tt_ld_score(preds.data + w.row * preds.rstep + w.col * preds.cstep, preds.dtype);
        outside |= !(s >= 0.0 && s <= 1.0); /* NaN too */
    }
    outside = __syncthreads_or(outside);
    if (threadIdx.x == 0) {
        if (outside)
            atomicOr(&a.counters[0], 1u);
        __threadfence();
        if (atomicAdd(&a.counters[1], 1u) == gridDim.x - 1)
            *a.chosen = atomicOr(&a.counters[0], 0u) ? a.logit_threshold : a.threshold;
    }
}

/* ---- the kernels, by their C names ----------------------------------------------------- */

TT_KERNEL(tt_confmat_labels_shared)(tt_labels_args a) { confmat_labels_body<true>(a); }
TT_KERNEL(tt_confmat_labels_global)(tt_labels_args a) { confmat_labels_body<false>(a); }
TT_SCORE_KERNELS(tt_confmat_scores_thread_shared, confmat_scores_thread_body, tt_labels_args, true)
TT_SCORE_KERNELS(tt_confmat_scores_thread_global, confmat_scores_thread_body, tt_labels_args, false)
TT_SCORE_KERNELS(tt_confmat_scores_warp_shared, confmat_scores_warp_body, tt_labels_args, true)
TT_SCORE_KERNELS(tt_confmat_scores_warp_global, confmat_scores_warp_body, tt_labels_args, false)
TT_KERNEL(tt_confmat_threshold_shared)(tt_threshold_args a) { confmat_threshold_body<true>(a); }
TT_KERNEL(tt_confmat_threshold_global)(tt_threshold_args a) { confmat_threshold_body<false>(a); }
