/*
 * topk.cu: top-k hit counts per class on the GPU, the CUDA twin of kernels/topk.c (contract in
 * csrc/API.md). Classes rank by score descending, lower index first among equal scores (a
 * stable order); out[c] = (times predicted: the target on a hit, else the best class; hits of
 * the target; target support).
 *
 * A warp takes a row and selects its k best in k rounds: each round every lane scans its
 * columns for the best (score, index) that ranks strictly after the previous round's pick, and
 * a butterfly shuffle leaves the winner in every lane. O(k * C / 32) per lane and no sort; the
 * first round also finds NaN (an error even in a masked row). Top-k accuracy uses small k; for
 * k near C the rounds cost O(k * C) per row.
 */
#include "cuda/common.cuh"

/* (best, best_j) becomes the warp's best in every lane: higher score, then lower index. */
template <typename A>
__device__ __forceinline__ void warp_best(A &best, int64_t &best_j)
{
    for (int offset = 16; offset > 0; offset >>= 1) {
        const A other = __shfl_xor_sync(TT_FULL_MASK, best, offset);
        const int64_t other_j = __shfl_xor_sync(TT_FULL_MASK, best_j, offset);
        if (other > best || (other == best && other_j < best_j)) {
            best = other;
            best_j = other_j;
        }
    }
}

template <typename T, bool SHARED>
__device__ __forceinline__ void topk_body(const tt_topk_args &a)
{
    if (tt_nothing_to_undo(a.gate))
        return; /* an undo replay of a call that had no error */
    typedef typename tt_score<T>::acc acc;
    TT_DYNAMIC_SHARED(unsigned, sh);
    const int64_t classes = a.classes, bins = classes * 3;
    if (SHARED)
        tt_hist_zero(sh, bins);
    const int lane = threadIdx.x & 31;
    const int64_t warps = ((int64_t)gridDim.x * blockDim.x) >> 5;

    for (int64_t row = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5; row < a.preds.rows;
         row += warps) {
        const char *p = a.preds.data + row * a.preds.rstep;
        /* every lane reads the same flags and label: all branches below are warp-uniform */
        int counted = tt_ld_keep(a.mask, row);
        const int64_t t = tt_ld_label(a.target.data + row * a.target.rstep, a.target.dtype);
        if (a.has_ignore && t == a.ignore)
            counted = 0;
        acc previous = 0;
        int64_t previous_j = -1, top1 = -1;
        int hit = 0;
        for (int64_t round = 0; round < a.k; round++) {
            acc best = -INFINITY;
            int64_t best_j = INT64_MAX; /* loses to any real index, even at -inf */
            int nan = 0;
            for (int64_t j = lane; j < classes; j += 32) {
                const acc v = tt_score<T>::at(p + j * a.preds.cstep);
                if (round == 0)
                    nan |= v != v;
                else if (!(v < previous || (v == previous && j > previous_j)))
                    continue; /* picked already, or ranked ahead of the last pick */
                if (v > best || (v == best && j < best_j)) {
                    best = v;
                    best_j = j;
                }
            }
            warp_best<acc>(best, best_j);
            if (round == 0) {
                if (__any_sync(TT_FULL_MASK, nan)) {
                    if (lane == 0)
                        tt_report(a.rec, TT_CUDA_KEY(row, TT_CODE_NAN));
                    counted = 0;
                    break;
                }
                if (!counted)
                    break; /* masked or ignored: the NaN check was all it needed */
                if ((uint64_t)t >= (uint64_t)classes) {
                    if (lane == 0)
                        tt_report(a.rec, TT_CUDA_KEY(row, TT_CODE_TARGET));
                    counted = 0;
                    break;
                }
                top1 = best_j;
            }
            hit |= best_j == t;
            previous = best;
            previous_j = best_j;
        }
        if (lane == 0 && counted) {
            /* the prediction: the target on a hit, else the best class */
            tt_count<SHARED>(sh, a.out, (hit ? t : top1) * 3 + 0, a.sign);
            if (hit)
                tt_count<SHARED>(sh, a.out, t * 3 + 1, a.sign);
            tt_count<SHARED>(sh, a.out, t * 3 + 2, a.sign);
        }
    }
    if (SHARED)
        tt_hist_flush(sh, a.out, bins, a.sign);
}

TT_SCORE_KERNELS(tt_topk_shared, topk_body, tt_topk_args, true)
TT_SCORE_KERNELS(tt_topk_global, topk_body, tt_topk_args, false)
