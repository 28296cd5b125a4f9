/*
 * common.cuh: what the CUDA kernels share. A compact device view of a tensor (byte steps),
 * element loads for every supported dtype, the report into the call's error record, the
 * per-block privatised histogram (uint32 counters in shared memory, flushed into the int64
 * output with one global atomic per non-zero bin), and grid sizing.
 *
 * Kernels use grid-stride loops over a grid sized to keep every SM busy, so the number of
 * samples one block counts stays far below 2^32 and its uint32 counters cannot wrap.
 */
#ifndef TT_CUDA_COMMON_CUH
#define TT_CUDA_COMMON_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>

#include "cuda/cuda_api.h"

/* Dynamic shared memory a kernel may take without an opt-in, on every supported arch. */
#define TT_SHARED_BYTES (48 * 1024)
#define TT_THREADS 256
#define TT_FULL_MASK 0xffffffffu

/* A tensor as a kernel reads it: [rows, cols] with steps in bytes (cols = 1, cstep = 0 for a
 * vector). A NULL view (no mask, no weights) has data == NULL. */
typedef struct {
    const char *data;
    int dtype;
    int64_t rows, cols;
    int64_t rstep, cstep;
} tt_dview;

static inline tt_dview tt_dview_of(const tt_view *v)
{
    tt_dview d;
    memset(&d, 0, sizeof d);
    if (v == NULL)
        return d;
    d.data = v->data;
    d.dtype = (int)v->dtype;
    d.rows = v->ndim >= 1 ? v->shape[0] : 1;
    d.cols = v->ndim == 2 ? v->shape[1] : 1;
    d.rstep = v->ndim >= 1 ? tt_step(v, 0) : 0;
    d.cstep = v->ndim == 2 ? tt_step(v, 1) : 0;
    return d;
}

/* ---- element loads ------------------------------------------------------------------------ */

__device__ __forceinline__ int64_t tt_ld_label(const char *p, int dtype)
{
    switch (dtype) {
    case TT_BOOL:
    case TT_U8: return *(const uint8_t *)p;
    case TT_I8: return *(const int8_t *)p;
    case TT_I16: return *(const int16_t *)p;
    case TT_I32: return *(const int32_t *)p;
    default: return *(const int64_t *)p;
    }
}

/* Any score dtype as double: exact for every one of them. */
__device__ __forceinline__ double tt_ld_score(const char *p, int dtype)
{
    switch (dtype) {
    case TT_F16: return (double)__half2float(*(const __half *)p);
    case TT_BF16: return (double)__bfloat162float(*(const __nv_bfloat16 *)p);
    case TT_F32: return (double)*(const float *)p;
    case TT_F64: return *(const double *)p;
    default: return (double)tt_ld_label(p, dtype);
    }
}

__device__ __forceinline__ int tt_ld_keep(const tt_dview &mask, int64_t row)
{
    return mask.data == NULL || *(const uint8_t *)(mask.data + row * mask.rstep) != 0;
}

/* Typed score loads for the hot kernels; `acc` compares exactly (float holds every half and
 * bfloat16 value). */
template <typename T> struct tt_score;
template <> struct tt_score<float> {
    typedef float acc;
    static __device__ __forceinline__ float at(const void *p) { return *(const float *)p; }
};
template <> struct tt_score<double> {
    typedef double acc;
    static __device__ __forceinline__ double at(const void *p) { return *(const double *)p; }
};
template <> struct tt_score<__half> {
    typedef float acc;
    static __device__ __forceinline__ float at(const void *p) { return __half2float(*(const __half *)p); }
};
template <> struct tt_score<__nv_bfloat16> {
    typedef float acc;
    static __device__ __forceinline__ float at(const void *p)
    {
        return __bfloat162float(*(const __nv_bfloat16 *)p);
    }
};

/* Dispatch on a score dtype by table: TT_SCORE_TABLE(f) initialises an array of f<T> for the
 * four score types in tt_dtype order from TT_F16, which tt_score_index(dtype) indexes, e.g.
 *     static const launcher by_dtype[TT_SCORE_TYPES] = TT_SCORE_TABLE(launch_scores);
 *     by_dtype[tt_score_index(preds->dtype)](a, stream);
 * (the dtype is validated on the host first: one of the four floats). */
#define TT_SCORE_TYPES 4
#define TT_SCORE_TABLE(f) {&f<__half>, &f<__nv_bfloat16>, &f<float>, &f<double>}

static inline int tt_score_index(tt_dtype dtype) { return (int)dtype - (int)TT_F16; }

/* ---- elementwise walks over [rows, cols] ---------------------------------------------------- */

/* A grid-stride walk over the elements of a row-major [rows, cols] index space keeps (row, col)
 * up to date by addition: one 64-bit division per thread, not one per element. */
typedef struct {
    int64_t row, col;
    int64_t step_rows, step_cols; /* the grid stride as (rows, cols) */
    int64_t cols;
} tt_walk;

__device__ __forceinline__ tt_walk tt_walk_start(int64_t e, int64_t stride, int64_t cols)
{
    tt_walk w;
    w.cols = cols;
    w.row = e / cols;
    w.col = e - w.row * cols;
    w.step_rows = stride / cols;
    w.step_cols = stride - w.step_rows * cols;
    return w;
}

__device__ __forceinline__ void tt_walk_next(tt_walk &w)
{
    w.row += w.step_rows;
    w.col += w.step_cols;
    if (w.col >= w.cols) {
        w.col -= w.cols;
        w.row++;
    }
}

/* ---- errors ------------------------------------------------------------------------------- */

__device__ __forceinline__ void tt_report(tt_cuda_record *rec, unsigned long long key)
{
    /* the plain read first keeps a batch full of bad samples from serialising on the atomic */
    if (rec != NULL && key < *(volatile unsigned long long *)&rec->key)
        atomicMin(&rec->key, key);
}

/* True when `gate` (the record of the call an undo replay would undo) holds no error: the
 * replay then has nothing to do and every block returns at once. NULL: not a replay. */
__device__ __forceinline__ bool tt_nothing_to_undo(const tt_cuda_record *gate)
{
    return gate != NULL && gate->key == TT_CUDA_CLEAR && gate->thr_key == TT_CUDA_CLEAR;
}

/* ---- privatised histograms ---------------------------------------------------------------- */

template <bool SHARED>
__device__ __forceinline__ void tt_count(unsigned *sh, long long *out, int64_t bin, int64_t sign)
{
    if (SHARED)
        atomicAdd(&sh[bin], 1u);
    else
        atomicAdd((unsigned long long *)&out[bin], (unsigned long long)sign);
}

__device__ __forceinline__ void tt_hist_zero(unsigned *sh, int64_t bins)
{
    for (int64_t i = threadIdx.x; i < bins; i += blockDim.x)
        sh[i] = 0;
    __syncthreads();
}

/* Adds the block's counts times `sign` into out (two's complement: -1 undoes). */
__device__ __forceinline__ void tt_hist_flush(const unsigned *sh, long long *out, int64_t bins,
                                              int64_t sign)
{
    __syncthreads();
    for (int64_t i = threadIdx.x; i < bins; i += blockDim.x) {
        const unsigned c = sh[i];
        if (c != 0)
            atomicAdd((unsigned long long *)&out[i], (unsigned long long)((long long)c * sign));
    }
}

/* ---- sizing ------------------------------------------------------------------------------- */

static inline int tt_sm_count(void)
{
    static int cached[64];
    int device = 0, count = 0;
    if (cudaGetDevice(&device) != cudaSuccess)
        return 32;
    if (device >= 0 && device < 64 && cached[device] > 0)
        return cached[device];
    if (cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device) != cudaSuccess ||
        count <= 0)
        return 32;
    if (device >= 0 && device < 64)
        cached[device] = count; /* a benign race: every writer stores the same value */
    return count;
}

/* Blocks for `work` items at `per_block` items per block, at most `blocks_per_sm` per SM, and
 * at least enough that no block counts 2^31 items. Grid-stride kernels take one full wave: a
 * grid a little larger than what fits on the GPU at once would leave a second, nearly empty wave
 * holding a full share of the work. */
static inline unsigned tt_grid(int64_t work, int64_t per_block, int blocks_per_sm)
{
    int64_t g = (work + per_block - 1) / per_block;
    const int64_t cap = (int64_t)tt_sm_count() * blocks_per_sm;
    if (g > cap)
        g = cap;
    const int64_t floor = work / ((int64_t)1 << 31) + 1;
    if (g < floor)
        g = floor;
    if (g > 0x7fffffff)
        g = 0x7fffffff;
    return (unsigned)(g < 1 ? 1 : g);
}

/* tt_grid with blocks_per_sm = how many blocks of `kernel` (TT_THREADS threads, `shared` bytes)
 * fit on one SM at once. */
template <typename Kernel>
static inline unsigned tt_grid_for(Kernel kernel, int64_t work, int64_t per_block, size_t shared)
{
    int per_sm = 0;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, TT_THREADS, shared) != cudaSuccess ||
        per_sm < 1)
        per_sm = 1;
    return tt_grid(work, per_block, per_sm);
}

#endif /* TT_CUDA_COMMON_CUH */
