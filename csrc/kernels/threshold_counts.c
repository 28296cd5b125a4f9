/*
 * threshold_counts.c: CriticalSuccessIndex's counts in one read of preds (x) and target (y). The
 * torch path summed both inputs for the finiteness check, compared each with the threshold, made
 * a uint8 code per element and counted the codes: five full-size passes. Here a chunk of each
 * column is compared in SIMD lanes (read in place when unit-stride, else widened into buffers
 * that stay in L1), the lanes counting preds, target and both at or above the threshold, while
 * a sum of v - v gives the verdict: NaN only if an input is NaN or inf, and then the inputs are
 * searched for the element to name.
 */
#include "kernels/threshold_counts.h"

#include <math.h>
#include <string.h>

#include "kernels/error_terms.h"
#include "kernels/simd.h"
#include "kernels/vec_math.h"

/* the four-lane vectors live in registers of inlined code only: no ABI crossing */
#pragma GCC diagnostic ignored "-Wpsabi"

enum { NEITHER, Y_ONLY, X_ONLY, BOTH };

typedef float v8f __attribute__((vector_size(32)));
typedef int32_t v8i __attribute__((vector_size(32)));

/* The counts of one chunk of n values (x at or above tx, y at or above ty, both) added into
 * acc[3]; returns the verdict: 0, or NaN when a value is NaN or inf (v - v is 0 for every
 * finite v, so it never overflows). Compared in the inputs' own dtype: float32 eight lanes at a
 * time with no widening, float64 four; a comparison gives -1 in a true lane. */
#define CHUNK_COUNTS(NAME, T, VT, VI, W, ATTR)                                                     \
    ATTR static double NAME(const T *restrict xs, const T *restrict ys, int64_t n, double tx,      \
                            double ty, int64_t *acc)                                               \
    {                                                                                              \
        const T x0 = (T)tx, y0 = (T)ty;                                                            \
        VT s = {0};                                                                                \
        VI cx = {0}, cy = {0}, cb = {0};                                                           \
        int64_t i = 0;                                                                             \
        for (; i + (W) <= n; i += (W)) {                                                           \
            VT a, b;                                                                               \
            memcpy(&a, xs + i, sizeof a);                                                          \
            memcpy(&b, ys + i, sizeof b);                                                          \
            const VI ax = a >= x0, by = b >= y0;                                                   \
            s += (a - a) + (b - b);                                                                \
            cx -= ax;                                                                              \
            cy -= by;                                                                              \
            cb -= ax & by;                                                                         \
        }                                                                                          \
        int64_t above[3] = {0, 0, 0}; /* the lanes, then the tail */                               \
        double verdict = 0.0;                                                                      \
        for (int l = 0; l < (W); l++) {                                                            \
            above[0] += cx[l];                                                                     \
            above[1] += cy[l];                                                                     \
            above[2] += cb[l];                                                                     \
            verdict += s[l];                                                                       \
        }                                                                                          \
        for (; i < n; i++) {                                                                       \
            above[0] += xs[i] >= x0;                                                               \
            above[1] += ys[i] >= y0;                                                               \
            above[2] += (xs[i] >= x0) & (ys[i] >= y0);                                             \
            verdict += (double)((xs[i] - xs[i]) + (ys[i] - ys[i]));                                \
        }                                                                                          \
        acc[0] += above[0];                                                                        \
        acc[1] += above[1];                                                                        \
        acc[2] += above[2];                                                                        \
        return verdict;                                                                            \
    }

#define AVX2 __attribute__((target("avx2")))
CHUNK_COUNTS(chunk_f64_base, double, tt_v4d, tt_v4i, 4, )
CHUNK_COUNTS(chunk_f32_base, float, v8f, v8i, 8, )
#ifdef TT_HAVE_AVX2_TARGET
CHUNK_COUNTS(chunk_f64_avx2, double, tt_v4d, tt_v4i, 4, AVX2)
CHUNK_COUNTS(chunk_f32_avx2, float, v8f, v8i, 8, AVX2)
#endif

typedef double (*chunk_f64_fn)(const double *, const double *, int64_t, double, double, int64_t *);
typedef double (*chunk_f32_fn)(const float *, const float *, int64_t, double, double, int64_t *);

/* Whether column `col` of v is `dtype` with unit stride along the samples (read in place). */
static int unit_column(const tt_view *v, tt_dtype dtype)
{
    return v->dtype == dtype && (v->shape[0] <= 1 || v->stride[0] == 1);
}

/* The batch's counts (x, y, both at or above) into acc[3]; returns the verdict (0 or NaN). */
static double batch_counts(const tt_view *x, const tt_view *y, double threshold, int64_t *acc)
{
    chunk_f64_fn f64 = chunk_f64_base;
    chunk_f32_fn f32 = chunk_f32_base;
#ifdef TT_HAVE_AVX2_TARGET
    if (tt_simd_level() >= TT_SIMD_AVX2) {
        f64 = chunk_f64_avx2;
        f32 = chunk_f32_avx2;
    }
#endif
    const int64_t n = x->shape[0], d = x->ndim == 2 ? x->shape[1] : 1;
    /* the generic path compares widened values with the threshold as torch compares it with a
     * tensor of that dtype: rounded to float32 for float32 */
    const double tx = x->dtype == TT_F32 ? (double)(float)threshold : threshold;
    const double ty = y->dtype == TT_F32 ? (double)(float)threshold : threshold;
    const int in_f32 = d == 1 && unit_column(x, TT_F32) && unit_column(y, TT_F32);
    const int in_f64 = d == 1 && unit_column(x, TT_F64) && unit_column(y, TT_F64);
    double xb[TT_CHUNK], yb[TT_CHUNK], verdict = 0.0;
    for (int64_t start = 0; start < n; start += TT_CHUNK) {
        const int64_t m = n - start < TT_CHUNK ? n - start : TT_CHUNK;
        if (in_f32) {
            verdict +=
                f32((const float *)x->data + start, (const float *)y->data + start, m, tx, ty, acc);
            continue;
        }
        if (in_f64) {
            verdict += f64((const double *)x->data + start, (const double *)y->data + start, m, tx,
                           ty, acc);
            continue;
        }
        for (int64_t j = 0; j < d; j++) {
            (void)tt_load_scores(x, start, m, j, xb); /* (a NaN is found through the verdict) */
            (void)tt_load_scores(y, start, m, j, yb);
            verdict += f64(xb, yb, m, tx, ty, acc);
        }
    }
    return verdict;
}

static tt_status check_input(const tt_view *v, const char *arg, tt_error *err)
{
    char got[96];
    if (tt_check_values(v, arg, err))
        return err->status;
    if (v->dtype != TT_F32 && v->dtype != TT_F64)
        return tt_fail(err, TT_ETYPE, arg, "expected float32 or float64, got %s",
                       tt_describe(v, got, sizeof got));
    return TT_OK;
}

static tt_status check_all(const tt_view *counts, const tt_view *x, const tt_view *y,
                           double threshold, tt_error *err)
{
    char got[96], want[96];
    if (check_input(x, "x", err) || check_input(y, "y", err))
        return err->status;
    if (y->ndim != x->ndim || y->shape[0] != x->shape[0] ||
        (x->ndim == 2 && y->shape[1] != x->shape[1]))
        return tt_fail(err, TT_EVALUE, "y", "expected the shape of x (%s), got %s",
                       tt_describe(x, want, sizeof want), tt_describe(y, got, sizeof got));
    if (threshold != threshold)
        return tt_fail(err, TT_EVALUE, "threshold", "expected a number, got NaN");
    const int64_t shape[1] = {4};
    return tt_check_out(counts, "counts", TT_I64, 1, shape, err);
}

tt_status tt_threshold_counts(const tt_view *counts, const tt_view *x, const tt_view *y,
                              double threshold, tt_error *err)
{
    tt_status st = check_all(counts, x, y, threshold, err);
    if (st != TT_OK)
        return st;
    int64_t above[3] = {0, 0, 0}; /* x, y, both */
    const double verdict = batch_counts(x, y, threshold, above);
    if (verdict != 0.0 && (st = tt_error_search(x, y, TT_ERR_SQUARED, 0.0, err)) != TT_OK)
        return st;
    const int64_t n = x->shape[0] * (x->ndim == 2 ? x->shape[1] : 1);
    const int64_t batch[4] = {n - above[0] - above[1] + above[2], above[1] - above[2],
                              above[0] - above[2], above[2]};
    int64_t *dst = (int64_t *)counts->data, total[4];
    for (int k = 0; k < 4; k++)
        if (__builtin_add_overflow(dst[k], batch[k], &total[k]))
            return tt_fail(err, TT_EVALUE, "counts",
                           "expected counts that fit int64 after %lld more elements", (long long)n);
    for (int k = 0; k < 4; k++)
        dst[k] = total[k];
    return TT_OK;
}
