/*
 * binned.cu: binned score histograms on the GPU, the CUDA twin of kernels/binned.c (contract in
 * csrc/API.md). Each score lands in bin b = #{i : thresholds[i] <= s}; out[k, b, positive]
 * counts. O(N*K) lookups, O(T) memory: no N x T comparison.
 *
 * The thresholds are copied into shared memory when T <= 2048 and the per-block histogram sits
 * beside them when K * (T + 1) * 2 counters still fit, else the counts go to global atomics
 * (the launch, enqueue_count.c, picks the variant).
 * Evenly spaced thresholds use the CPU core's direct index plus correction, so both paths give
 * the binary search's bin exactly.
 */
#include "cuda/common.cuh"

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
__device__ __forceinline__ void binned_body(const tt_binned_args &a)
{
    if (tt_nothing_to_undo(a.gate))
        return;                            /* an undo replay of a call that had no error */
    TT_DYNAMIC_SHARED(double, shared_thr); /* [T] thresholds, then the uint32 histogram */
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
    const int64_t limit = a.multiclass ? cols : 2,
                  first = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    tt_walk w = tt_walk_start(first, stride, cols);
    for (int64_t e = first; e < total; e += stride, tt_walk_next(w)) {
        const int64_t row = w.row, col = w.col;
        const double s =
            tt_ld_score(a.preds.data + row * a.preds.rstep + col * a.preds.cstep, a.preds.dtype);
        if (s != s) { /* an error even in a masked or ignored sample */
            tt_report(a.rec, TT_CUDA_KEY(e, TT_CODE_NAN));
            continue;
        }
        if (!tt_ld_keep(a.mask, row))
            continue;
        const char *tp =
            a.target.data + row * a.target.rstep + (a.multiclass ? 0 : col * a.target.cstep);
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

TT_KERNEL(tt_thresholds_check)(tt_thresholds_check_args a)
{
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < a.count; i += stride) {
        const double v = a.thresholds[i];
        if (v != v)
            atomicMin(&a.rec->thr_key, TT_CUDA_KEY(i, TT_THR_NAN));
        else if (i > 0 && v < a.thresholds[i - 1])
            atomicMin(&a.rec->thr_key, TT_CUDA_KEY(i, TT_THR_ORDER));
    }
}

TT_KERNEL(tt_binned_shared_hist_shared_thr)(tt_binned_args a) { binned_body<true, true>(a); }
TT_KERNEL(tt_binned_shared_hist_global_thr)(tt_binned_args a) { binned_body<true, false>(a); }
TT_KERNEL(tt_binned_global_hist_shared_thr)(tt_binned_args a) { binned_body<false, true>(a); }
TT_KERNEL(tt_binned_global_hist_global_thr)(tt_binned_args a) { binned_body<false, false>(a); }
