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
 * Argmax of [N, C] scores: a warp per row for C > 16 (lanes read 16-byte vectors when rows are
 * contiguous and aligned, with several loads in flight per lane), a thread per row for small C
 * or column-major scores. Ties go to the lowest index, as torch.argmax.
 */
#include "cuda/common.cuh"

typedef struct {
    tt_dview preds, target, mask;
    int64_t classes;
    int has_ignore;
    int64_t ignore;
    int vectorised; /* scores rows are contiguous and 16-byte aligned */
    int64_t sign;
    long long *out;
    tt_cuda_record *rec;        /* sign +1: where errors go */
    const tt_cuda_record *gate; /* sign -1: the record of the call being undone */
} labels_args;

static labels_args labels_args_of(const tt_view *out, const tt_view *preds, const tt_view *target,
                                  const tt_view *mask, const int64_t *ignore_index, int64_t sign,
                                  tt_cuda_record *rec)
{
    labels_args a;
    memset(&a, 0, sizeof a);
    a.preds = tt_dview_of(preds);
    a.target = tt_dview_of(target);
    a.mask = tt_dview_of(mask);
    a.classes = out->shape[0];
    a.has_ignore = ignore_index != NULL;
    a.ignore = ignore_index != NULL ? *ignore_index : 0;
    a.sign = sign;
    a.out = (long long *)out->data;
    a.rec = sign > 0 ? rec : NULL;
    a.gate = sign < 0 ? rec : NULL;
    return a;
}

/* The label checks of the CPU walk for a sample whose prediction is known, then the count. */
template <bool SHARED>
__device__ __forceinline__ void count_sample(const labels_args &a, unsigned *sh, int64_t row,
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
__global__ void __launch_bounds__(TT_THREADS) confmat_labels_kernel(labels_args a)
{
    if (tt_nothing_to_undo(a.gate))
        return; /* an undo replay of a call that had no error */
    extern __shared__ unsigned sh[];
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
__global__ void __launch_bounds__(TT_THREADS) confmat_scores_warp_kernel(labels_args a)
{
    if (tt_nothing_to_undo(a.gate))
        return; /* an undo replay of a call that had no error */
    typedef typename tt_score<T>::acc acc;
    const int per = 16 / (int)sizeof(T); /* elements per 16-byte vector */
    extern __shared__ unsigned sh[];
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
                    consider<acc>(tt_score<T>::at(&vals[e]), (v + 32 * u) * per + e, best, best_j, nan);
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
__global__ void __launch_bounds__(TT_THREADS) confmat_scores_thread_kernel(labels_args a)
{
    if (tt_nothing_to_undo(a.gate))
        return; /* an undo replay of a call that had no error */
    typedef typename tt_score<T>::acc acc;
    extern __shared__ unsigned sh[];
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

typedef struct {
    tt_dview preds, target, mask;
    int float_preds;
    double threshold;
    const double *threshold_at; /* device: the threshold chosen by the pick kernel, or NULL */
    int has_ignore;
    int64_t ignore;
    int64_t sign;
    long long *out; /* [L, 2, 2] */
    tt_cuda_record *rec;        /* sign +1: where errors go */
    const tt_cuda_record *gate; /* sign -1: the record of the call being undone */
} threshold_args;

template <bool SHARED>
__global__ void __launch_bounds__(TT_THREADS) confmat_threshold_kernel(threshold_args a)
{
    if (tt_nothing_to_undo(a.gate))
        return; /* an undo replay of a call that had no error */
    extern __shared__ unsigned sh[];
    const int64_t cols = a.preds.cols, total = a.preds.rows * cols, bins = 4 * cols;
    if (SHARED)
        tt_hist_zero(sh, bins);
    /* the count and its undo replay read the same chosen threshold */
    const double threshold = a.threshold_at != NULL ? *a.threshold_at : a.threshold;
    const int64_t stride = (int64_t)gridDim.x * blockDim.x, first = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
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
__global__ void __launch_bounds__(TT_THREADS)
threshold_pick_kernel(tt_dview preds, double threshold, double logit_threshold, double *chosen,
                      unsigned *counters)
{
    const int64_t cols = preds.cols, total = preds.rows * cols;
    const int64_t stride = (int64_t)gridDim.x * blockDim.x, first = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    int outside = 0;
    tt_walk w = tt_walk_start(first, stride, cols);
    for (int64_t e = first; e < total; e += stride, tt_walk_next(w)) {
        const double s = tt_ld_score(preds.data + w.row * preds.rstep + w.col * preds.cstep, preds.dtype);
        outside |= !(s >= 0.0 && s <= 1.0); /* NaN too */
    }
    outside = __syncthreads_or(outside);
    if (threadIdx.x == 0) {
        if (outside)
            atomicOr(&counters[0], 1u);
        __threadfence();
        if (atomicAdd(&counters[1], 1u) == gridDim.x - 1)
            *chosen = atomicOr(&counters[0], 0u) ? logit_threshold : threshold;
    }
}

extern "C" cudaError_t tt_cuda_threshold_pick_launch(const tt_view *preds, double threshold,
                                                     double logit_threshold, double *chosen,
                                                     unsigned *counters, cudaStream_t stream)
{
    const tt_dview p = tt_dview_of(preds);
    cudaError_t e = cudaMemsetAsync(counters, 0, 2 * sizeof(unsigned), stream);
    if (e != cudaSuccess)
        return e;
    const int64_t total = p.rows * p.cols;
    const unsigned grid = tt_grid_for(threshold_pick_kernel, total > 0 ? total : 1, TT_THREADS * 4, 0);
    threshold_pick_kernel<<<grid, TT_THREADS, 0, stream>>>(p, threshold, logit_threshold, chosen, counters);
    return cudaGetLastError();
}

/* ---- launchers ---------------------------------------------------------------------------- */

extern "C" cudaError_t tt_cuda_confmat_labels_launch(const tt_view *out, const tt_view *preds,
                                                     const tt_view *target, const tt_view *mask,
                                                     const int64_t *ignore_index, int64_t sign,
                                                     tt_cuda_record *rec, cudaStream_t stream)
{
    const labels_args a = labels_args_of(out, preds, target, mask, ignore_index, sign, rec);
    const int64_t n = target->shape[0];
    if (n == 0)
        return cudaSuccess;
    const size_t shared = (size_t)(a.classes * a.classes) * sizeof(unsigned);
    if (shared <= TT_SHARED_BYTES) {
        const unsigned grid = tt_grid_for(confmat_labels_kernel<true>, n, TT_THREADS * 4, shared);
        confmat_labels_kernel<true><<<grid, TT_THREADS, shared, stream>>>(a);
    } else {
        const unsigned grid = tt_grid_for(confmat_labels_kernel<false>, n, TT_THREADS, 0);
        confmat_labels_kernel<false><<<grid, TT_THREADS, 0, stream>>>(a);
    }
    return cudaGetLastError();
}

template <typename T>
static void launch_scores(labels_args a, cudaStream_t stream)
{
    const int64_t n = a.preds.rows, classes = a.classes;
    const size_t shared = (size_t)(classes * classes) * sizeof(unsigned);
    const int fits = shared <= TT_SHARED_BYTES;
    const int64_t rstep = a.preds.rstep < 0 ? -a.preds.rstep : a.preds.rstep;
    const int64_t cstep = a.preds.cstep < 0 ? -a.preds.cstep : a.preds.cstep;
    /* column-major scores: a thread per row keeps neighbouring threads on neighbouring bytes */
    const int thread_per_row = classes <= 16 || cstep > rstep;
    a.vectorised = a.preds.cstep == (int64_t)sizeof(T) && (uintptr_t)a.preds.data % 16 == 0 &&
                   a.preds.rstep % 16 == 0;
    const int64_t rows_per_block = thread_per_row ? TT_THREADS : TT_THREADS / 32; /* or a warp per row */
    if (thread_per_row && fits)
        confmat_scores_thread_kernel<T, true><<<tt_grid_for(confmat_scores_thread_kernel<T, true>, n, rows_per_block, shared),
                                                TT_THREADS, shared, stream>>>(a);
    else if (thread_per_row)
        confmat_scores_thread_kernel<T, false><<<tt_grid_for(confmat_scores_thread_kernel<T, false>, n, rows_per_block, 0),
                                                 TT_THREADS, 0, stream>>>(a);
    else if (fits)
        confmat_scores_warp_kernel<T, true><<<tt_grid_for(confmat_scores_warp_kernel<T, true>, n, rows_per_block, shared),
                                              TT_THREADS, shared, stream>>>(a);
    else
        confmat_scores_warp_kernel<T, false><<<tt_grid_for(confmat_scores_warp_kernel<T, false>, n, rows_per_block, 0),
                                               TT_THREADS, 0, stream>>>(a);
}

extern "C" cudaError_t tt_cuda_confmat_scores_launch(const tt_view *out, const tt_view *preds,
                                                     const tt_view *target, const tt_view *mask,
                                                     const int64_t *ignore_index, int64_t sign,
                                                     tt_cuda_record *rec, cudaStream_t stream)
{
    const labels_args a = labels_args_of(out, preds, target, mask, ignore_index, sign, rec);
    if (preds->shape[0] == 0 || a.classes == 0)
        return cudaSuccess;
    typedef void (*launcher)(labels_args, cudaStream_t);
    static const launcher by_dtype[TT_SCORE_TYPES] = TT_SCORE_TABLE(launch_scores);
    by_dtype[tt_score_index(preds->dtype)](a, stream);
    return cudaGetLastError();
}

extern "C" cudaError_t tt_cuda_confmat_threshold_launch(const tt_view *out, const tt_view *preds,
                                                        const tt_view *target, const tt_view *mask,
                                                        const int64_t *ignore_index,
                                                        double threshold,
                                                        const double *threshold_at, int64_t sign,
                                                        tt_cuda_record *rec, cudaStream_t stream)
{
    threshold_args a;
    memset(&a, 0, sizeof a);
    a.preds = tt_dview_of(preds);
    a.target = tt_dview_of(target);
    a.mask = tt_dview_of(mask);
    a.float_preds = tt_is_float(preds->dtype);
    a.threshold = threshold;
    a.threshold_at = threshold_at;
    a.has_ignore = ignore_index != NULL;
    a.ignore = ignore_index != NULL ? *ignore_index : 0;
    a.sign = sign;
    a.out = (long long *)out->data;
    a.rec = sign > 0 ? rec : NULL;
    a.gate = sign < 0 ? rec : NULL;
    const int64_t total = a.preds.rows * a.preds.cols;
    if (total == 0)
        return cudaSuccess;
    const size_t shared = (size_t)(4 * a.preds.cols) * sizeof(unsigned);
    if (shared <= TT_SHARED_BYTES) {
        const unsigned grid = tt_grid_for(confmat_threshold_kernel<true>, total, TT_THREADS * 4, shared);
        confmat_threshold_kernel<true><<<grid, TT_THREADS, shared, stream>>>(a);
    } else {
        const unsigned grid = tt_grid_for(confmat_threshold_kernel<false>, total, TT_THREADS, 0);
        confmat_threshold_kernel<false><<<grid, TT_THREADS, 0, stream>>>(a);
    }
    return cudaGetLastError();
}
