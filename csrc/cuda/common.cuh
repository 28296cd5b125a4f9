/*
 * common.cuh: what the CUDA kernels share. Element loads for every supported dtype, the report
 * into the call's error record, the per-block privatised histogram (uint32 counters in shared
 * memory, flushed into the int64 output with one global atomic per non-zero bin), and the
 * macro that gives every kernel its C name. Device code only: the launches are the host's
 * (enqueue_count.c, enqueue_moments.c), the argument structs device_abi.h's.
 *
 * Kernels use grid-stride loops over a grid sized to keep every SM busy, so the number of
 * samples one block counts stays far below 2^32 and its uint32 counters cannot wrap.
 */
#ifndef TT_CUDA_COMMON_CUH
#define TT_CUDA_COMMON_CUH

#ifdef TT_EMULATION /* the kernels run on the host: emulation/README.md */
#include "cuda/emulation/host_prelude.h"
#else
#include "cuda/device_prelude.cuh"
#endif
#include "cuda/device_abi.h"

#define TT_FULL_MASK 0xffffffffu

/* The block's dynamic shared memory (the launch's `shared` bytes) as an array of `type`. */
#ifndef TT_EMULATION
#define TT_DYNAMIC_SHARED(type, name) extern __shared__ type name[]
#endif

/* A kernel with a C name (kernel_table.h), taking its argument struct by value. */
#define TT_KERNEL(name) extern "C" __global__ void __launch_bounds__(TT_THREADS) name

/* The two 16-bit float dtypes as their bits; converted with one instruction each. */
struct tt_f16 {
    unsigned short bits;
};
struct tt_bf16 {
    unsigned short bits;
};

__device__ __forceinline__ float tt_f16_to_float(unsigned short bits)
{
#ifdef TT_EMULATION
    return tt_emu_half_to_float(bits);
#else
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(bits));
    return f;
#endif
}

__device__ __forceinline__ float tt_bf16_to_float(unsigned short bits)
{
    return __int_as_float((int)((unsigned)bits << 16));
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
    case TT_F16: return (double)tt_f16_to_float(*(const unsigned short *)p);
    case TT_BF16: return (double)tt_bf16_to_float(*(const unsigned short *)p);
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
template <typename T>
struct tt_score;
template <>
struct tt_score<float> {
    typedef float acc;
    static __device__ __forceinline__ float at(const void *p) { return *(const float *)p; }
};
template <>
struct tt_score<double> {
    typedef double acc;
    static __device__ __forceinline__ double at(const void *p) { return *(const double *)p; }
};
template <>
struct tt_score<tt_f16> {
    typedef float acc;
    static __device__ __forceinline__ float at(const void *p)
    {
        return tt_f16_to_float(*(const unsigned short *)p);
    }
};
template <>
struct tt_score<tt_bf16> {
    typedef float acc;
    static __device__ __forceinline__ float at(const void *p)
    {
        return tt_bf16_to_float(*(const unsigned short *)p);
    }
};

/* The four kernels of a body templated on the score type, one per score dtype, named as
 * kernel_table.h's TT_PER_SCORE_DTYPE: TT_SCORE_KERNELS(name, body, Args, flag). */
#define TT_SCORE_KERNELS(name, body, Args, flag)                                                   \
    TT_KERNEL(name##_f16)(Args a) { body<tt_f16, flag>(a); }                                       \
    TT_KERNEL(name##_bf16)(Args a) { body<tt_bf16, flag>(a); }                                     \
    TT_KERNEL(name##_f32)(Args a) { body<float, flag>(a); }                                        \
    TT_KERNEL(name##_f64)(Args a) { body<double, flag>(a); }

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

#endif /* TT_CUDA_COMMON_CUH */
