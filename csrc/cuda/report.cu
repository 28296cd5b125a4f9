/*
 * report.cu: the latch, one thread enqueued after a call's kernels (and its gated undo) that
 * copies the call's error record into host memory, with the rejected element read where the
 * record points. The host finds the report when it next looks (pending.c) and explains it in
 * the CPU core's words; the update itself never waits for it.
 *
 * Reading the element here, on the stream, is what lets the message name the bad label or
 * weight even when the caller has reused the input's memory by the time the host looks.
 */
#include "cuda/common.cuh"

typedef struct {
    tt_dview by_code[5];
    int64_t columns;
    tt_dview thresholds;
} latch_args;

/* The element at position `pos` (row * columns + column) of `v`; a 1-D view ignores the column. */
__device__ __forceinline__ const char *element_at(const tt_dview &v, int64_t pos, int64_t columns)
{
    const int64_t row = pos / columns, col = pos - row * columns;
    return v.data + row * v.rstep + col * v.cstep;
}

__global__ void latch_kernel(const tt_cuda_record *rec, latch_args a, tt_cuda_report *report)
{
    tt_cuda_report r;
    r.key = rec->key;
    r.thr_key = rec->thr_key;
    r.label = 0;
    r.value = 0.0;
    r.thr_here = r.thr_before = 0.0;
    if (r.key != TT_CUDA_CLEAR) {
        const tt_dview &v = a.by_code[TT_CUDA_KEY_CODE(r.key) % 5];
        if (v.data != NULL) {
            const char *p = element_at(v, TT_CUDA_KEY_POS(r.key), a.columns);
            r.value = tt_ld_score(p, v.dtype);
            if (v.dtype != TT_F16 && v.dtype != TT_BF16 && v.dtype != TT_F32 && v.dtype != TT_F64)
                r.label = (long long)tt_ld_label(p, v.dtype);
        }
    }
    if (r.thr_key != TT_CUDA_CLEAR && a.thresholds.data != NULL) {
        const int64_t i = TT_CUDA_KEY_POS(r.thr_key);
        r.thr_here = *(const double *)(a.thresholds.data + i * a.thresholds.rstep);
        if (i > 0)
            r.thr_before = *(const double *)(a.thresholds.data + (i - 1) * a.thresholds.rstep);
    }
    *report = r; /* host memory: visible to the host once the call's completion event has fired */
}

extern "C" cudaError_t tt_cuda_latch_launch(const tt_cuda_record *rec, const tt_cuda_latch_spec *spec,
                                            tt_cuda_report *report, cudaStream_t stream)
{
    latch_args a;
    memset(&a, 0, sizeof a);
    for (int c = 0; c < 5; c++)
        a.by_code[c] = tt_dview_of(spec->by_code[c]);
    a.columns = spec->columns > 0 ? spec->columns : 1;
    a.thresholds = tt_dview_of(spec->thresholds);
    latch_kernel<<<1, 1, 0, stream>>>(rec, a, report);
    return cudaGetLastError();
}
