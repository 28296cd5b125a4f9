/*
 * moments.cu: per-column moments and co-moments on the GPU, the CUDA twin of kernels/moments.c
 * (contract in csrc/API.md). One pass: every thread keeps a Welford state (n, mean, M2, plus
 * sum, min, max; or the co-moment form) over the rows it strides, in float64; the threads of a
 * block that share a column are folded with Chan's pairwise merge, then the per-block partials
 * of a column are merged in block order by a second small kernel into `batch` [D, 6]. The
 * merge of `batch` into the state is gated on the call's error record (a kernel test, not a
 * host read), so a NaN leaves the state untouched. The launch geometry (blockDim.x columns by
 * blockDim.y rows) is enqueue_moments.c's.
 *
 * Chan et al.: n = na + nb, d = mean_b - mean_a, mean = mean_a + d * nb / n,
 *              M2 = M2_a + M2_b + d^2 * na * nb / n,  C = C_a + C_b + dx * dy * na * nb / n.
 * Partials and batch rows use the state's column order: moments (n, sum, mean, m2, min, max),
 * co-moments (n, mean_x, mean_y, m2_x, m2_y, c_xy).
 */
#include "cuda/common.cuh"

enum { N_ = 0, SUM_ = 1, MEAN_ = 2, M2_ = 3, MIN_ = 4, MAX_ = 5 };
enum { MX_ = 1, MY_ = 2, M2X_ = 3, M2Y_ = 4, CXY_ = 5 };

/* ---- merges (the CPU core's operation order) ---------------------------------------------- */

__device__ __forceinline__ void merge_moments(tt_row6 &a, const tt_row6 &b)
{
    a.v[SUM_] += b.v[SUM_];
    if (b.v[MIN_] < a.v[MIN_])
        a.v[MIN_] = b.v[MIN_];
    if (b.v[MAX_] > a.v[MAX_])
        a.v[MAX_] = b.v[MAX_];
    const double na = a.v[N_], nb = b.v[N_], total = na + nb;
    if (nb == 0.0)
        return;
    if (na == 0.0) {
        a.v[N_] = nb;
        a.v[MEAN_] = b.v[MEAN_];
        a.v[M2_] = b.v[M2_];
        return;
    }
    const double delta = b.v[MEAN_] - a.v[MEAN_];
    a.v[MEAN_] += delta * (nb / total);
    a.v[M2_] += b.v[M2_] + delta * delta * (na * nb / total);
    a.v[N_] = total;
}

__device__ __forceinline__ void merge_comoments(tt_row6 &a, const tt_row6 &b)
{
    const double na = a.v[N_], nb = b.v[N_];
    if (nb == 0.0)
        return;
    if (na == 0.0) {
        a = b;
        return;
    }
    const double total = na + nb, weight = na * nb / total;
    const double dx = b.v[MX_] - a.v[MX_], dy = b.v[MY_] - a.v[MY_];
    a.v[MX_] += dx * (nb / total);
    a.v[MY_] += dy * (nb / total);
    a.v[M2X_] += b.v[M2X_] + dx * dx * weight;
    a.v[M2Y_] += b.v[M2Y_] + dy * dy * weight;
    a.v[CXY_] += b.v[CXY_] + dx * dy * weight;
    a.v[N_] = total;
}

__device__ __forceinline__ tt_row6 empty_moments(void)
{
    tt_row6 r = {{0.0, 0.0, 0.0, 0.0, INFINITY, -INFINITY}};
    return r;
}

__device__ __forceinline__ tt_row6 empty_comoments(void)
{
    tt_row6 r = {{0.0, 0.0, 0.0, 0.0, 0.0, 0.0}};
    return r;
}

/* Folds the block's rows of each column together (Chan) and stores row 0's result. */
template <bool CO>
__device__ __forceinline__ void block_fold(tt_row6 mine, int64_t col, int64_t columns,
                                           tt_row6 *partials)
{
    __shared__ tt_row6 sh[TT_THREADS];
    const unsigned x = threadIdx.x, y = threadIdx.y, bx = blockDim.x;
    sh[y * bx + x] = mine;
    __syncthreads();
    for (unsigned s = blockDim.y / 2; s > 0; s >>= 1) {
        if (y < s) {
            if (CO)
                merge_comoments(sh[y * bx + x], sh[(y + s) * bx + x]);
            else
                merge_moments(sh[y * bx + x], sh[(y + s) * bx + x]);
        }
        __syncthreads();
    }
    if (y == 0 && col < columns)
        partials[(int64_t)blockIdx.y * columns + col] = sh[x];
}

TT_KERNEL(tt_moments_partial)(tt_partial_args a)
{
    const tt_dview &x = a.x, &w = a.second;
    const int64_t columns = a.columns;
    tt_cuda_record *rec = a.rec;
    const int64_t col = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    const int64_t stride = (int64_t)gridDim.y * blockDim.y;
    tt_row6 m = empty_moments();
    for (int64_t row = (int64_t)blockIdx.y * blockDim.y + threadIdx.y;
         col < columns && row < x.rows; row += stride) {
        const double v = tt_ld_score(x.data + row * x.rstep + col * x.cstep, x.dtype);
        if (v != v) {
            tt_report(rec, TT_CUDA_KEY(row * columns + col, TT_CODE_NAN));
            continue;
        }
        double wi = 1.0;
        if (w.data != NULL) {
            wi = tt_ld_score(w.data + row * w.rstep, w.dtype);
            if (!(wi >= 0.0) || isinf(wi)) {
                tt_report(rec, TT_CUDA_KEY(row * columns + col, TT_CODE_WEIGHT));
                continue;
            }
        }
        m.v[N_] += wi;
        m.v[SUM_] += wi * v;
        if (wi > 0.0) { /* weighted Welford */
            const double d = v - m.v[MEAN_];
            m.v[MEAN_] += d * (wi / m.v[N_]);
            m.v[M2_] += wi * d * (v - m.v[MEAN_]);
            if (v < m.v[MIN_])
                m.v[MIN_] = v;
            if (v > m.v[MAX_])
                m.v[MAX_] = v;
        }
    }
    block_fold<false>(m, col, columns, a.partials);
}

TT_KERNEL(tt_comoments_partial)(tt_partial_args a)
{
    const tt_dview &x = a.x, &y = a.second;
    const int64_t columns = a.columns;
    tt_cuda_record *rec = a.rec;
    const int64_t col = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    const int64_t stride = (int64_t)gridDim.y * blockDim.y;
    tt_row6 m = empty_comoments();
    for (int64_t row = (int64_t)blockIdx.y * blockDim.y + threadIdx.y;
         col < columns && row < x.rows; row += stride) {
        const double vx = tt_ld_score(x.data + row * x.rstep + col * x.cstep, x.dtype);
        const double vy = tt_ld_score(y.data + row * y.rstep + col * y.cstep, y.dtype);
        if (vx != vx || vy != vy) {
            tt_report(rec,
                      TT_CUDA_KEY(row * columns + col, vx != vx ? TT_CODE_NAN : TT_CODE_NAN_Y));
            continue;
        }
        m.v[N_] += 1.0;
        const double dx = vx - m.v[MX_];
        m.v[MX_] += dx / m.v[N_];
        const double dy = vy - m.v[MY_];
        m.v[MY_] += dy / m.v[N_];
        m.v[M2X_] += dx * (vx - m.v[MX_]);
        m.v[M2Y_] += dy * (vy - m.v[MY_]);
        m.v[CXY_] += dx * (vy - m.v[MY_]);
    }
    block_fold<true>(m, col, columns, a.partials);
}

/* batch[col] = the column's partials merged in block order. */
template <bool CO>
__device__ __forceinline__ void finalize_body(const tt_finalize_args &a)
{
    const tt_row6 *partials = a.partials;
    const int64_t groups = a.groups, columns = a.columns;
    const int64_t col = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (col >= columns)
        return;
    tt_row6 m = partials[col];
    for (int64_t g = 1; g < groups; g++) {
        if (CO)
            merge_comoments(m, partials[g * columns + col]);
        else
            merge_moments(m, partials[g * columns + col]);
    }
    a.batch[col] = m;
}

TT_KERNEL(tt_moments_finalize)(tt_finalize_args a) { finalize_body<false>(a); }
TT_KERNEL(tt_comoments_finalize)(tt_finalize_args a) { finalize_body<true>(a); }

/* ---- state merges -------------------------------------------------------------------------- */

template <bool CO>
__device__ __forceinline__ void merge_body(const tt_merge_args &a)
{
    double *state = a.state;
    const tt_dview &other = a.other;
    const int64_t rows = a.rows;
    const tt_cuda_record *gate = a.gate;
    const int64_t d = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (d >= rows || (gate != NULL && gate->key != TT_CUDA_CLEAR))
        return; /* a batch with a bad value is never merged */
    tt_row6 mine, theirs;
    for (int c = 0; c < 6; c++) {
        mine.v[c] = state[d * 6 + c];
        theirs.v[c] = *(const double *)(other.data + d * other.rstep + c * other.cstep);
    }
    if (CO)
        merge_comoments(mine, theirs);
    else
        merge_moments(mine, theirs);
    for (int c = 0; c < 6; c++)
        state[d * 6 + c] = mine.v[c];
}

TT_KERNEL(tt_moments_merge)(tt_merge_args a) { merge_body<false>(a); }
TT_KERNEL(tt_comoments_merge)(tt_merge_args a) { merge_body<true>(a); }
