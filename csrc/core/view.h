/*
 * view.h: what every torchtally C file shares. Status codes and the error record that kernels
 * fill (binding.c alone turns them into Python exceptions), the dtype enum, tt_view (a borrowed,
 * validated tensor: pointer, dtype, shape, strides in elements), and small inline loaders that
 * read one element of any supported dtype as int64 or double.
 *
 * Kernels are plain C: no Python, no allocation they do not free, no write outside `out`.
 */
#ifndef TT_VIEW_H
#define TT_VIEW_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define TT_MAX_NDIM 4
#define TT_MESSAGE_SIZE 320

typedef enum {
    TT_OK = 0,
    TT_ETYPE,      /* wrong type or dtype: TypeError */
    TT_EVALUE,     /* wrong shape, device or value: ValueError */
    TT_ENOMEM,     /* allocation failed: MemoryError */
    TT_ECUDA = 64, /* a CUDA call failed (torchtally._C_cuda only): RuntimeError */
} tt_status;

typedef struct {
    tt_status status;
    char message[TT_MESSAGE_SIZE]; /* "<argument>: <what was expected, what arrived>" */
} tt_error;

/* Records the error. */
void tt_fail_message(tt_error *err, tt_status status, const char *arg, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

/* Records the error and gives its status, so a kernel can `return tt_fail(...)`. A macro, so that
 * the value is seen where the call is (a static analyser then knows that a failing check does not
 * go on); `status` is always a constant or a side-effect-free choice between two. */
static inline tt_status tt_failed(tt_status status) { return status; }
#define tt_fail(err, status, ...) (tt_fail_message((err), (status), __VA_ARGS__), tt_failed(status))

#include "core/dtype.h"

const char *tt_dtype_name(tt_dtype dtype);
size_t tt_dtype_size(tt_dtype dtype);

static inline int tt_is_float(tt_dtype d) { return d >= TT_F16; }
static inline int tt_is_label(tt_dtype d) { return d <= TT_I64; }

/* A tensor as the kernels see it. `data` already includes DLPack's byte_offset. */
typedef struct {
    char *data;
    tt_dtype dtype;
    int ndim;
    int64_t shape[TT_MAX_NDIM];
    int64_t stride[TT_MAX_NDIM]; /* elements, not bytes */
    int32_t device_type;
    int32_t device_id;
} tt_view;

/* "int64 [32, 10]" into buf, for messages. */
const char *tt_describe(const tt_view *v, char *buf, size_t size);

/* Contract checks shared by the kernel families; each fails with a message naming `arg`. */
tt_status tt_check_cpu(const tt_view *v, const char *arg, tt_error *err);
tt_status tt_check_out(const tt_view *out, const char *arg, tt_dtype dtype, int ndim,
                       const int64_t *shape, tt_error *err);
tt_status tt_check_labels(const tt_view *v, const char *arg, int ndim, tt_error *err);
tt_status tt_check_scores(const tt_view *v, const char *arg, int ndim, tt_error *err);
tt_status tt_check_mask(const tt_view *mask, int64_t n, tt_error *err);

/* Three checks that two kernel families share with the CUDA host side (cuda/launch_count.c,
 * cuda/launch_moments.c). Inline, as they were when each file had its own copy: an exported
 * function of a shared object is called through the PLT, and a kernel call on a small batch is
 * short. */

/* out: an int64 [classes, classes] confusion matrix (tt_check_out's rules). */
static inline tt_status tt_check_square_out(const tt_view *out, int64_t classes, tt_error *err)
{
    const int64_t shape[2] = {classes, classes};
    return tt_check_out(out, "out", TT_I64, 2, shape, err);
}

/* v has as many samples (shape[0]) as target. */
static inline tt_status tt_check_same_length(const tt_view *v, const char *arg,
                                             const tt_view *target, tt_error *err)
{
    if (v->shape[0] == target->shape[0])
        return TT_OK;
    return tt_fail(err, TT_EVALUE, arg, "expected %lld samples (as target), got %lld",
                   (long long)target->shape[0], (long long)v->shape[0]);
}

/* x: floating values [N] or [N, D] (the moments kernels' x and y). */
static inline tt_status tt_check_values(const tt_view *x, const char *arg, tt_error *err)
{
    char got[96];
    if (x->ndim != 1 && x->ndim != 2)
        return tt_fail(err, TT_EVALUE, arg, "expected values [N] or [N, D], got %s",
                       tt_describe(x, got, sizeof got));
    return tt_check_scores(x, arg, x->ndim, err);
}

/* Starts a function at a 64-byte boundary, for small hot functions (view.c's chunk loaders): a
 * loop of a few instructions measured a third slower when it straddled two fetch blocks (an AMD
 * EPYC), and where a function lands is otherwise an accident of the code before it. */
#if defined(__GNUC__)
#define TT_ALIGNED_CODE __attribute__((aligned(64)))
#else
#define TT_ALIGNED_CODE
#endif

/* ---- element loads ---------------------------------------------------------------------- */

/* IEEE half -> float without a loop: move exponent and mantissa into place and rebias the
 * exponent (15 -> 127); inf/NaN get the full float exponent, and subnormals are renormalised
 * by one float subtraction (the "magic number" method). */
static inline float tt_half_to_float(uint16_t h)
{
    const uint32_t exponent_mask = 0x7c00u << 13; /* the half exponent, at float position */
    uint32_t bits = (uint32_t)(h & 0x7fffu) << 13;
    const uint32_t exponent = bits & exponent_mask;
    bits += (uint32_t)(127 - 15) << 23;
    float f;
    if (exponent == exponent_mask) { /* inf or NaN */
        bits += (uint32_t)(128 - 16) << 23;
        memcpy(&f, &bits, sizeof f);
    } else if (exponent == 0) { /* zero or subnormal */
        bits += (uint32_t)1 << 23;
        memcpy(&f, &bits, sizeof f);
        f -= 6.103515625e-05f; /* 2^-14 */
    } else {
        memcpy(&f, &bits, sizeof f);
    }
    uint32_t with_sign;
    memcpy(&with_sign, &f, sizeof with_sign);
    with_sign |= (uint32_t)(h & 0x8000u) << 16;
    memcpy(&f, &with_sign, sizeof f);
    return f;
}

static inline float tt_bf16_to_float(uint16_t h)
{
    uint32_t bits = (uint32_t)h << 16;
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

/* One float element at byte pointer `p`, by dtype: the typed loads of the kernels' per-dtype
 * loops (float16 and bfloat16 widen to float exactly). */
static inline float tt_f16_at(const char *p) { return tt_half_to_float(*(const uint16_t *)p); }
static inline float tt_bf16_at(const char *p) { return tt_bf16_to_float(*(const uint16_t *)p); }
static inline float tt_f32_at(const char *p) { return *(const float *)p; }
static inline double tt_f64_at(const char *p) { return *(const double *)p; }

/* Element `i` of a 1-D view, or element (i, j) through explicit byte pointer `p`. */
static inline int64_t tt_load_label(const char *p, tt_dtype d)
{
    switch (d) {
    case TT_BOOL:
    case TT_U8: return *(const uint8_t *)p;
    case TT_I8: return *(const int8_t *)p;
    case TT_I16: return *(const int16_t *)p;
    case TT_I32: return *(const int32_t *)p;
    case TT_I64: return *(const int64_t *)p;
    default: return 0;
    }
}

static inline double tt_load_score(const char *p, tt_dtype d)
{
    switch (d) {
    case TT_F16: return tt_f16_at(p);
    case TT_BF16: return tt_bf16_at(p);
    case TT_F32: return tt_f32_at(p);
    case TT_F64: return tt_f64_at(p);
    default: return (double)tt_load_label(p, d);
    }
}

/* Byte step along dimension `dim`. */
static inline int64_t tt_step(const tt_view *v, int dim)
{
    return v->stride[dim] * (int64_t)tt_dtype_size(v->dtype);
}

/* ---- chunked label loading -------------------------------------------------------------- */

/* Kernels walk samples in chunks of TT_CHUNK, converting labels to int64 once per chunk, so
 * the per-sample loop has no dtype switch in it. */
#define TT_CHUNK 1024

/* dst[i] = label at positions start..start+n of 1-D view v (or column `col` of a 2-D view). */
void tt_load_labels(const tt_view *v, int64_t start, int64_t n, int64_t col, int64_t *dst);

/* dst[i] = score at positions start..start+n of a 1-D view (or column `col` of a 2-D view), as
 * double. Returns the chunk offset of the first NaN, or -1 when there is none. */
int64_t tt_load_scores(const tt_view *v, int64_t start, int64_t n, int64_t col, double *dst);

/* keep[0..n) = mask flags at start..start+n (1 everywhere when mask is NULL). */
void tt_load_keep(const tt_view *mask, int64_t start, int64_t n, uint8_t *keep);

/* ---- walk positions ------------------------------------------------------------------------ */

/* Kernels over [N, K] inputs walk chunks of TT_CHUNK rows and, within a chunk, column by
 * column. A bad element stops the walk; the same walk with sign -1 and `stop` at that element
 * undoes it. `stop` is the first element not to visit. */
typedef struct {
    int64_t row, col;
} tt_position;

static const tt_position TT_WALK_ALL = {INT64_MAX - TT_CHUNK, 0};

/* How many rows of the chunk starting at `start` (n rows) to visit in column `col` before
 * reaching `stop`: n when stop lies beyond, fewer when it lies inside, 0 once it has passed.
 * One comparison per (chunk, column), not per element. */
static inline int64_t tt_rows_before(int64_t start, int64_t n, int64_t col, tt_position stop)
{
    if (stop.row >= start + TT_CHUNK)
        return n; /* stop lies in a later chunk */
    if (stop.row < start || col > stop.col)
        return 0;
    return col < stop.col ? n : stop.row - start;
}

/* A walk that meets a bad element at `at`: sets *bad = at and returns 1, the walks' "stopped".
 * The counting walk (sign > 0) also records a TT_EVALUE error naming `arg`; the undo walk
 * (sign < 0) leaves `err` alone, so the first walk's message is the one raised. */
int tt_walk_stop(tt_position *bad, tt_position at, int64_t sign, tt_error *err, const char *arg,
                 const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 6, 7)))
#endif
    ;

#endif /* TT_VIEW_H */
