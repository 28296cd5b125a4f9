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

/* The element at position `pos` (row * columns + column) of `v`; a 1-D view ignores the column. */
__device__ __forceinline__ const char *element_at(const tt_dview &v, int64_t pos, int64_t columns)
{
    const int64_t row = pos / columns, col = pos - row * columns;
    return v.data + row * v.rstep + col * v.cstep;
}

TT_KERNEL(tt_latch)(tt_latch_args a)
{
    const tt_cuda_record *rec = a.rec;
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
    *a.report = r; /* host memory: visible to the host once the call's completion event has fired */
}
