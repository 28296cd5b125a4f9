/*
 * view.c: plain-C helpers over tt_view shared by every kernel family (and by the CUDA host side,
 * csrc/cuda/): error records and a walk's bad-element report, dtype names and sizes, the
 * contract checks (device, dtype, rank, output layout) and chunked label loading. Nothing here
 * touches Python.
 */
#include "core/view.h"

#include <stdarg.h>
#include <stdio.h>

static void fail_v(tt_error *err, tt_status status, const char *arg, const char *fmt, va_list ap)
{
    int used = snprintf(err->message, sizeof err->message, "%s: ", arg);
    if (used < 0 || (size_t)used >= sizeof err->message)
        used = 0;
    vsnprintf(err->message + used, sizeof err->message - (size_t)used, fmt, ap);
    err->status = status;
}

void tt_fail_message(tt_error *err, tt_status status, const char *arg, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fail_v(err, status, arg, fmt, ap);
    va_end(ap);
}

int tt_walk_stop(tt_position *bad, tt_position at, int64_t sign, tt_error *err, const char *arg,
                 const char *fmt, ...)
{
    *bad = at;
    if (sign > 0) {
        va_list ap;
        va_start(ap, fmt);
        fail_v(err, TT_EVALUE, arg, fmt, ap);
        va_end(ap);
    }
    return 1;
}

static const char *const dtype_names[TT_NDTYPES] = {
    "bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64",
};
static const size_t dtype_sizes[TT_NDTYPES] = {1, 1, 1, 2, 4, 8, 2, 2, 4, 8};

const char *tt_dtype_name(tt_dtype dtype)
{
    return (unsigned)dtype < TT_NDTYPES ? dtype_names[dtype] : "unknown";
}

size_t tt_dtype_size(tt_dtype dtype)
{
    return (unsigned)dtype < TT_NDTYPES ? dtype_sizes[dtype] : 1;
}

const char *tt_describe(const tt_view *v, char *buf, size_t size)
{
    int used = snprintf(buf, size, "%s [", tt_dtype_name(v->dtype));
    for (int d = 0; d < v->ndim && used >= 0 && (size_t)used < size; d++)
        used += snprintf(buf + used, size - (size_t)used, d ? ", %lld" : "%lld",
                         (long long)v->shape[d]);
    if (used >= 0 && (size_t)used < size)
        snprintf(buf + used, size - (size_t)used, "]");
    return buf;
}

tt_status tt_check_cpu(const tt_view *v, const char *arg, tt_error *err)
{
    if (v->device_type == 1 || v->device_type == 3) /* kDLCPU, kDLCUDAHost (pinned) */
        return TT_OK;
    return tt_fail(err, TT_EVALUE, arg,
                   "expected a CPU tensor, got one on DLPack device type %d (id %d); "
                   "a CUDA tensor needs the CUDA build or the torch reference path",
                   (int)v->device_type, (int)v->device_id);
}

static int is_contiguous(const tt_view *v)
{
    for (int d = 0; d < v->ndim; d++)
        if (v->shape[d] == 0)
            return 1; /* no elements: any strides will do */
    int64_t expected = 1;
    for (int d = v->ndim - 1; d >= 0; d--) {
        /* d < ndim <= TT_MAX_NDIM (tensor.c); the analyser loses that bound in this loop */
        // NOLINTNEXTLINE(clang-analyzer-security.ArrayBound)
        if (v->shape[d] != 1 && v->stride[d] != expected)
            return 0;
        expected *= v->shape[d];
    }
    return 1;
}

tt_status tt_check_out(const tt_view *out, const char *arg, tt_dtype dtype, int ndim,
                       const int64_t *shape, tt_error *err)
{
    char got[96];
    int shape_ok = out->ndim == ndim;
    for (int d = 0; shape_ok && d < ndim; d++)
        shape_ok = out->shape[d] == shape[d];
    if (out->dtype != dtype || !shape_ok) {
        char want[96];
        tt_view expected = {.dtype = dtype, .ndim = ndim};
        for (int d = 0; d < ndim; d++)
            expected.shape[d] = shape[d];
        return tt_fail(err, out->dtype != dtype ? TT_ETYPE : TT_EVALUE, arg, "expected %s, got %s",
                       tt_describe(&expected, want, sizeof want),
                       tt_describe(out, got, sizeof got));
    }
    if (!is_contiguous(out))
        return tt_fail(err, TT_EVALUE, arg, "expected a contiguous tensor, got a strided %s",
                       tt_describe(out, got, sizeof got));
    return tt_check_cpu(out, arg, err);
}

tt_status tt_check_labels(const tt_view *v, const char *arg, int ndim, tt_error *err)
{
    char got[96];
    if (!tt_is_label(v->dtype))
        return tt_fail(err, TT_ETYPE, arg, "expected an integer or bool tensor of labels, got %s",
                       tt_describe(v, got, sizeof got));
    if (v->ndim != ndim)
        return tt_fail(err, TT_EVALUE, arg, "expected a %d-D tensor of labels, got %s", ndim,
                       tt_describe(v, got, sizeof got));
    return tt_check_cpu(v, arg, err);
}

tt_status tt_check_scores(const tt_view *v, const char *arg, int ndim, tt_error *err)
{
    char got[96];
    if (!tt_is_float(v->dtype))
        return tt_fail(err, TT_ETYPE, arg,
                       "expected a floating tensor (float16, bfloat16, float32, float64), got %s",
                       tt_describe(v, got, sizeof got));
    if (v->ndim != ndim)
        return tt_fail(err, TT_EVALUE, arg, "expected a %d-D tensor of scores, got %s", ndim,
                       tt_describe(v, got, sizeof got));
    return tt_check_cpu(v, arg, err);
}

tt_status tt_check_mask(const tt_view *mask, int64_t n, tt_error *err)
{
    char got[96];
    if (mask == NULL)
        return TT_OK;
    if (mask->dtype != TT_BOOL && mask->dtype != TT_U8)
        return tt_fail(err, TT_ETYPE, "mask", "expected a bool tensor [%lld], got %s", (long long)n,
                       tt_describe(mask, got, sizeof got));
    if (mask->ndim != 1 || mask->shape[0] != n)
        return tt_fail(err, TT_EVALUE, "mask",
                       "expected shape [%lld] (one flag per sample), got %s", (long long)n,
                       tt_describe(mask, got, sizeof got));
    return tt_check_cpu(mask, "mask", err);
}

/* ---- chunked loads: one loop per dtype, picked from a table ----------------------------- */

/* The integer element at p, by dtype (the float ones are view.h's tt_f16_at, ...). */
static inline int64_t u8_at(const char *p) { return *(const uint8_t *)p; }
static inline int64_t i8_at(const char *p) { return *(const int8_t *)p; }
static inline int64_t i16_at(const char *p) { return *(const int16_t *)p; }
static inline int64_t i32_at(const char *p) { return *(const int32_t *)p; }
static inline int64_t i64_at(const char *p) { return *(const int64_t *)p; }

/* dst[i] = the element at p + i * step, for i in [0, n). */
typedef void (*label_loop)(const char *p, int64_t step, int64_t n, int64_t *dst);
/* The same as double; returns nonzero when one of them is NaN. */
typedef int (*score_loop)(const char *p, int64_t step, int64_t n, double *dst);

#define DEFINE_LABEL_LOOP(name, load)                                                              \
    TT_ALIGNED_CODE static void name(const char *p, int64_t step, int64_t n, int64_t *dst)         \
    {                                                                                              \
        for (int64_t i = 0; i < n; i++, p += step)                                                 \
            dst[i] = load(p);                                                                      \
    }

#define DEFINE_SCORE_LOOP(name, load)                                                              \
    TT_ALIGNED_CODE static int name(const char *p, int64_t step, int64_t n, double *dst)           \
    {                                                                                              \
        int nan = 0;                                                                               \
        for (int64_t i = 0; i < n; i++, p += step) {                                               \
            dst[i] = (double)load(p);                                                              \
            nan |= dst[i] != dst[i];                                                               \
        }                                                                                          \
        return nan;                                                                                \
    }

DEFINE_LABEL_LOOP(labels_u8, u8_at)
DEFINE_LABEL_LOOP(labels_i8, i8_at)
DEFINE_LABEL_LOOP(labels_i16, i16_at)
DEFINE_LABEL_LOOP(labels_i32, i32_at)
DEFINE_LABEL_LOOP(labels_i64, i64_at)

/* integer scores are exact in double and never NaN */
DEFINE_SCORE_LOOP(scores_u8, u8_at)
DEFINE_SCORE_LOOP(scores_i8, i8_at)
DEFINE_SCORE_LOOP(scores_i16, i16_at)
DEFINE_SCORE_LOOP(scores_i32, i32_at)
DEFINE_SCORE_LOOP(scores_i64, i64_at)
DEFINE_SCORE_LOOP(scores_f16, tt_f16_at)
DEFINE_SCORE_LOOP(scores_bf16, tt_bf16_at)
DEFINE_SCORE_LOOP(scores_f32, tt_f32_at)
DEFINE_SCORE_LOOP(scores_f64, tt_f64_at)

/* NULL: not a label dtype (tt_load_labels then writes zeros; validation refuses such inputs). */
static const label_loop label_loops[TT_NDTYPES] = {
    [TT_BOOL] = labels_u8, [TT_U8] = labels_u8,   [TT_I8] = labels_i8,
    [TT_I16] = labels_i16, [TT_I32] = labels_i32, [TT_I64] = labels_i64,
};

static const score_loop score_loops[TT_NDTYPES] = {
    [TT_BOOL] = scores_u8, [TT_U8] = scores_u8,   [TT_I8] = scores_i8,   [TT_I16] = scores_i16,
    [TT_I32] = scores_i32, [TT_I64] = scores_i64, [TT_F16] = scores_f16, [TT_BF16] = scores_bf16,
    [TT_F32] = scores_f32, [TT_F64] = scores_f64,
};

/* The first element of a chunk: row `start` of v, column `col` of a 2-D one. */
static const char *chunk_base(const tt_view *v, int64_t start, int64_t col)
{
    return v->data + start * tt_step(v, 0) + (v->ndim > 1 ? col * tt_step(v, 1) : 0);
}

void tt_load_labels(const tt_view *v, int64_t start, int64_t n, int64_t col, int64_t *dst)
{
    if (n <= 0)
        return;
    const label_loop loop = label_loops[v->dtype];
    if (loop == NULL)
        memset(dst, 0, (size_t)n * sizeof *dst);
    else
        loop(chunk_base(v, start, col), tt_step(v, 0), n, dst);
}

void tt_load_keep(const tt_view *mask, int64_t start, int64_t n, uint8_t *keep)
{
    if (n <= 0)
        return;
    if (mask == NULL) {
        memset(keep, 1, (size_t)n);
        return;
    }
    int64_t step = tt_step(mask, 0);
    const char *p = mask->data + start * step;
    for (int64_t i = 0; i < n; i++, p += step)
        keep[i] = *(const uint8_t *)p != 0;
}

int64_t tt_load_scores(const tt_view *v, int64_t start, int64_t n, int64_t col, double *dst)
{
    if (n <= 0 || !score_loops[v->dtype](chunk_base(v, start, col), tt_step(v, 0), n, dst))
        return -1;
    for (int64_t i = 0; i < n; i++)
        if (dst[i] != dst[i])
            return i;
    return -1;
}
