/*
 * binned.cu: binned score histograms on the GPU, the CUDA twin of kernels/binned.c (contract in
 * csrc/API.md). Each score lands in bin b = #{i : thresholds[i] <= s}; out[k, b, positive]
 * counts. O(N*K) lookups, O(T) memory: no N x T comparison.
 *
 * The thresholds are copied into shared memory when T <= 2048 and the per-block histogram sits
 * beside them when K * (T + 1) * 2 counters still fit, else the counts go to global atomics.
 * Evenly spaced thresholds use the CPU core's direct index plus correction, so both paths give
 * the binary search's bin exactly.
 */
#include "cuda/common.cuh"

#define SHARED_THRESHOLDS_MAX 2048

typedef struct {
    tt_dview preds, target, mask;
    int multiclass; /* target holds class labels [N], one-vs-rest per column */
    int has_ignore;
    int64_t ignore;
    const double *thresholds;
    int64_t count; /* T */
    int uniform;
    int64_t sign;
    long long *out; /* [K, T + 1, 2] */
    tt_cuda_record *rec;        /* sign +1: where errors go */
    const tt_cuda_record *gate; /* sign -1: the record of the call being undone */
} binned_args;

__device__ __forceinline__ int64_t bin_by_search(const double *thr, int64_t count, double s)
{
    int64_t lo = 0, hi = count;
    while (lo < hi) {
        const int64_t mid = lo + (hi - lo) / 2;
        if (thr[mid] <= s)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

__device__ __forceinline__ int64_t bin_by_formula(const double *thr, int64_t count, double origin,
                                                  double scale, double s)
{
    const double guess = (s - origin) * scale + 1.0;
    int64_t b = !(guess > 0.0) ? 0 : guess >= (double)count ? count : (int64_t)guess;
    while (b < count && thr[b] <= s)
        b++;
    while (b > 0 && thr[b - 1] > s)
        b--;
    return b;
}

template <bool SH_HIST, bool SH_THR>
__global__ void __launch_bounds__(TT_THREADS) binned_kernel(binned_args a)
{
    if (tt_nothing_to_undo(a.gate))
        return; /* an undo replay of a call that had no error */
    extern __shared__ double shared_thr[]; /* [T] thresholds, then the uint32 histogram */
    unsigned *sh = (unsigned *)(shared_thr + (SH_THR ? a.count : 0));
    const int64_t cols = a.preds.cols, bins = a.count + 1, hist_bins = cols * bins * 2;
    if (SH_THR)
        for (int64_t i = threadIdx.x; i < a.count; i += blockDim.x)
            shared_thr[i] = a.thresholds[i];
    if (SH_HIST)
        tt_hist_zero(sh, hist_bins); /* its barrier also covers the threshold copy */
    else if (SH_THR)
        __syncthreads();
    const double *thr = SH_THR ? shared_thr : a.thresholds;

    /* the CPU core's formula, same operations: a usable one only for a finite, positive scale */
    int use_formula = 0;
    double origin = 0.0, scale = 0.0;
    if (a.uniform && a.count >= 2 && thr[a.count - 1] > thr[0]) {
        origin = thr[0];
        scale = (double)(a.count - 1) / (thr[a.count - 1] - thr[0]);
        use_formula = isfinite(origin) && isfinite(scale) && scale > 0.0;
    }

    const int64_t total = a.preds.rows * cols, stride = (int64_t)gridDim.x * blockDim.x;
    const int64_t limit = a.multiclass ? cols : 2, first = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    tt_walk w = tt_walk_start(first, stride, cols);
    for (int64_t e = first; e < total; e += stride, tt_walk_next(w)) {
        const int64_t row = w.row, col = w.col;
        const double s = tt_ld_score(a.preds.data + row * a.preds.rstep + col * a.preds.cstep,
                                     a.preds.dtype);
        if (s != s) { /* an error even in a masked or ignored sample */
            tt_report(a.rec, TT_CUDA_KEY(e, TT_CODE_NAN));
            continue;
        }
        if (!tt_ld_keep(a.mask, row))
            continue;
        const char *tp = a.target.data + row * a.target.rstep + (a.multiclass ? 0 : col * a.target.cstep);
        const int64_t t = tt_ld_label(tp, a.target.dtype);
        if (a.has_ignore && t == a.ignore)
            continue;
        if ((uint64_t)t >= (uint64_t)limit) {
            tt_report(a.rec, TT_CUDA_KEY(e, TT_CODE_TARGET));
            continue;
        }
        const int64_t positive = a.multiclass ? t == col : t;
        const int64_t b = use_formula ? bin_by_formula(thr, a.count, origin, scale, s)
                                      : bin_by_search(thr, a.count, s);
        tt_count<SH_HIST>(sh, a.out, (col * bins + b) * 2 + positive, a.sign);
    }
    if (SH_HIST)
        tt_hist_flush(sh, a.out, hist_bins, a.sign);
}

__global__ void thresholds_check_kernel(const double *thr, int64_t count, tt_cuda_record *rec)
{
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < count; i += stride) {
        const double v = thr[i];
        if (v != v)
            atomicMin(&rec->thr_key, TT_CUDA_KEY(i, TT_THR_NAN));
        else if (i > 0 && v < thr[i - 1])
            atomicMin(&rec->thr_key, TT_CUDA_KEY(i, TT_THR_ORDER));
    }
}

extern "C" cudaError_t tt_cuda_thresholds_check_launch(const tt_view *thresholds,
                                                       tt_cuda_record *rec, cudaStream_t stream)
{
    const int64_t count = thresholds->shape[0];
    if (count == 0)
        return cudaSuccess;
    thresholds_check_kernel<<<tt_grid(count, TT_THREADS, 1), TT_THREADS, 0, stream>>>(
        (const double *)thresholds->data, count, rec);
    return cudaGetLastError();
}

extern "C" cudaError_t tt_cuda_binned_launch(const tt_view *out, const tt_view *preds,
                                             const tt_view *target, const tt_view *mask,
                                             const int64_t *ignore_index,
                                             const tt_view *thresholds, int uniform, int64_t sign,
                                             tt_cuda_record *rec, cudaStream_t stream)
{
    binned_args a;
    memset(&a, 0, sizeof a);
    a.preds = tt_dview_of(preds);
    a.target = tt_dview_of(target);
    a.mask = tt_dview_of(mask);
    a.multiclass = preds->ndim == 2 && target->ndim == 1;
    a.has_ignore = ignore_index != NULL;
    a.ignore = ignore_index != NULL ? *ignore_index : 0;
    a.thresholds = (const double *)thresholds->data;
    a.count = thresholds->shape[0];
    a.uniform = uniform;
    a.sign = sign;
    a.out = (long long *)out->data;
    a.rec = sign > 0 ? rec : NULL;
    a.gate = sign < 0 ? rec : NULL;
    const int64_t total = a.preds.rows * a.preds.cols;
    if (total == 0)
        return cudaSuccess;

    const size_t thr_bytes = a.count <= SHARED_THRESHOLDS_MAX ? (size_t)a.count * sizeof(double) : 0;
    const size_t hist_bytes = (size_t)(a.preds.cols * (a.count + 1) * 2) * sizeof(unsigned);
    const int sh_hist = thr_bytes + hist_bytes <= TT_SHARED_BYTES;
    const size_t shared = thr_bytes + (sh_hist ? hist_bytes : 0);
    const int64_t per_block = sh_hist ? TT_THREADS * 4 : TT_THREADS;
#define LAUNCH_BINNED(h, t)                                                                     \
    binned_kernel<h, t><<<tt_grid_for(binned_kernel<h, t>, total, per_block, shared), TT_THREADS, \
                          shared, stream>>>(a)
    if (sh_hist && thr_bytes)
        LAUNCH_BINNED(true, true);
    else if (sh_hist)
        LAUNCH_BINNED(true, false);
    else if (thr_bytes)
        LAUNCH_BINNED(false, true);
    else
        LAUNCH_BINNED(false, false);
#undef LAUNCH_BINNED
    return cudaGetLastError();
}
