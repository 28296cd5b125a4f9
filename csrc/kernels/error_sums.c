/*
 * error_sums.c: the regression error metrics' batch sums in one read of preds (x) and target (y).
 * torch widens both inputs to float64, then runs one full-size pass per operation (subtract,
 * abs, divide, clamp, square, sum) and a reduction for the finiteness check; at a few hundred
 * samples each pass is a dispatch of a few microseconds. Here a chunk of each column is widened
 * into a buffer that stays in L1, its terms summed in four lanes, and each chunk's sum added to
 * the column's total (a two-level sum). The verdict comes from the total: a NaN or inf input
 * makes it NaN or inf, and only then are the inputs searched for the element to name (a total
 * that overflowed on finite inputs passes, as the torch path's). The per-row kinds (cosine,
 * divergences) live in error_rows.c.
 */
#include "kernels/error_sums.h"

#include <math.h>
#include <stdlib.h>

#include "kernels/error_terms.h"
#include "kernels/simd.h"
#include "kernels/vec_math.h"

/* the four-lane vectors live in registers of inlined code only: no ABI crossing */
#pragma GCC diagnostic ignored "-Wpsabi"

#define LANES 4

typedef double (*chunk_fn)(const double *, const double *, int64_t, double);
typedef double (*chunk_f32_fn)(const float *, const float *, int64_t, double);

/* The lane-summed terms of one chunk, one copy per kind (the term inlined into the loop), for
 * double buffers and for contiguous float32 read in place; and each compiled a second time for
 * AVX2 where the CPU has it (the compiler turns the four lanes into one vector; the libm calls
 * stay scalar). No FMA in either: every copy gives the same bits. */
#define CHUNK_LOOP(NAME, T, TERM, ATTR)                                                            \
    ATTR static double NAME(const T *restrict xs, const T *restrict ys, int64_t n, double q)       \
    {                                                                                              \
        double s[LANES] = {0.0, 0.0, 0.0, 0.0};                                                    \
        int64_t i = 0;                                                                             \
        for (; i + LANES <= n; i += LANES)                                                         \
            for (int l = 0; l < LANES; l++)                                                        \
                s[l] += TERM((double)xs[i + l], (double)ys[i + l], q);                             \
        for (; i < n; i++)                                                                         \
            s[0] += TERM((double)xs[i], (double)ys[i], q);                                         \
        return (s[0] + s[1]) + (s[2] + s[3]);                                                      \
    }

#define AVX2 __attribute__((target("avx2")))
#ifdef TT_HAVE_AVX2_TARGET
#define CHUNK_SUM(NAME, TERM)                                                                      \
    CHUNK_LOOP(NAME##_base, double, TERM, )                                                        \
    CHUNK_LOOP(NAME##_f32_base, float, TERM, )                                                     \
    CHUNK_LOOP(NAME##_avx2, double, TERM, AVX2)                                                    \
    CHUNK_LOOP(NAME##_f32_avx2, float, TERM, AVX2)
#else
#define CHUNK_SUM(NAME, TERM)                                                                      \
    CHUNK_LOOP(NAME##_base, double, TERM, )                                                        \
    CHUNK_LOOP(NAME##_f32_base, float, TERM, )
#endif

/* The kinds whose term takes a log or exp: four elements at a time through vec_math.h (a libm
 * call per element costs 10-20 ns); the tail padded with zeros (a zero term), so that every SIMD
 * level gives the same bits. */
#define VEC_CHUNK_LOOP(NAME, T, VTERM, ATTR)                                                       \
    ATTR static double NAME(const T *xs, const T *ys, int64_t n, double q)                         \
    {                                                                                              \
        tt_v4d s = tt_vec_splat(0.0);                                                              \
        int64_t i = 0;                                                                             \
        for (; i + LANES <= n; i += LANES) {                                                       \
            s += VTERM(tt_vec_load(xs + i), tt_vec_load(ys + i));                                  \
        }                                                                                          \
        if (i < n) {                                                                               \
            tt_v4d x = tt_vec_splat(0.0), y = tt_vec_splat(0.0);                                   \
            for (int l = 0; i + l < n; l++) {                                                      \
                x[l] = (double)xs[i + l];                                                          \
                y[l] = (double)ys[i + l];                                                          \
            }                                                                                      \
            s += VTERM(x, y);                                                                      \
        }                                                                                          \
        return (void)q, (s[0] + s[1]) + (s[2] + s[3]);                                             \
    }

#ifdef TT_HAVE_AVX2_TARGET
#define VEC_CHUNK_SUM(NAME, VTERM)                                                                 \
    VEC_CHUNK_LOOP(NAME##_base, double, VTERM, )                                                   \
    VEC_CHUNK_LOOP(NAME##_f32_base, float, VTERM, )                                                \
    VEC_CHUNK_LOOP(NAME##_avx2, double, VTERM, AVX2)                                               \
    VEC_CHUNK_LOOP(NAME##_f32_avx2, float, VTERM, AVX2)
#else
#define VEC_CHUNK_SUM(NAME, VTERM)                                                                 \
    VEC_CHUNK_LOOP(NAME##_base, double, VTERM, )                                                   \
    VEC_CHUNK_LOOP(NAME##_f32_base, float, VTERM, )
#endif

CHUNK_SUM(sum_squared, tt_term_squared)
CHUNK_SUM(sum_absolute, tt_term_absolute)
VEC_CHUNK_SUM(sum_log_cosh, tt_vec_term_log_cosh)
CHUNK_SUM(sum_abs_percent, tt_term_abs_percent)
CHUNK_SUM(sum_sym_percent, tt_term_sym_percent)
VEC_CHUNK_SUM(sum_squared_log, tt_vec_term_squared_log)
CHUNK_SUM(sum_minkowski, tt_term_minkowski)
CHUNK_SUM(sum_target_abs, tt_term_target_abs)
CHUNK_SUM(sum_cube, tt_term_cube)

/* Indexed by kind (the element kinds; WMAPE's is its first sum), then WMAPE's second sum and
 * Minkowski's p = 3 (p = 1 and 2 take the absolute and squared entries). */
#define TABLE(SUFFIX)                                                                              \
    {sum_squared##SUFFIX,     sum_absolute##SUFFIX,    sum_log_cosh##SUFFIX,                       \
     sum_abs_percent##SUFFIX, sum_sym_percent##SUFFIX, sum_squared_log##SUFFIX,                    \
     sum_minkowski##SUFFIX,   sum_absolute##SUFFIX,    sum_target_abs##SUFFIX,                     \
     sum_cube##SUFFIX}
#define TABLE_SIZE (TT_ERR_WEIGHTED_PERCENT + 3)
#define WMAPE_SCALE (TT_ERR_WEIGHTED_PERCENT + 1)
#define CUBE (TT_ERR_WEIGHTED_PERCENT + 2)
static const chunk_fn sums_base[TABLE_SIZE] = TABLE(_base);
static const chunk_f32_fn sums_f32_base[TABLE_SIZE] = TABLE(_f32_base);
#ifdef TT_HAVE_AVX2_TARGET
static const chunk_fn sums_avx2[TABLE_SIZE] = TABLE(_avx2);
static const chunk_f32_fn sums_f32_avx2[TABLE_SIZE] = TABLE(_f32_avx2);
#endif

/* The table entry of kind: Minkowski's p = 1, 2, 3 multiplied out, as torch's pow does (a libm
 * pow costs ten times more), all others their own. */
static int entry(int64_t kind, double p)
{
    if (kind != TT_ERR_MINKOWSKI)
        return (int)kind;
    return p == 1.0 ? TT_ERR_ABSOLUTE : (p == 2.0 ? TT_ERR_SQUARED : (p == 3.0 ? CUBE : (int)kind));
}

/* The batch's sums into acc[K] (zeroed by the caller): per column, or all in acc[0] (WMAPE:
 * acc[0], acc[1]). */
static void column_sums(const tt_view *x, const tt_view *y, int64_t kind, double param, double *acc)
{
    const int64_t n = x->shape[0], d = x->ndim == 2 ? x->shape[1] : 1;
    const int per_column = kind <= TT_ERR_LOG_COSH;
    const chunk_fn *table = sums_base;
    const chunk_f32_fn *table_f32 = sums_f32_base;
#ifdef TT_HAVE_AVX2_TARGET
    if (tt_simd_level() >= TT_SIMD_AVX2) {
        table = sums_avx2;
        table_f32 = sums_f32_avx2;
    }
#endif
    const int e = entry(kind, param);
    const chunk_fn fn = table[e], second = table[WMAPE_SCALE];
    /* [N] float32 with unit strides (the usual batch): read in place, no buffer */
    const int in_place = d == 1 && x->dtype == TT_F32 && y->dtype == TT_F32 &&
                         tt_step(x, 0) == (int64_t)sizeof(float) &&
                         tt_step(y, 0) == (int64_t)sizeof(float);
    const double q = kind == TT_ERR_MINKOWSKI ? param : 0.0;
    double xb[TT_CHUNK], yb[TT_CHUNK];
    for (int64_t start = 0; start < n; start += TT_CHUNK) {
        const int64_t m = n - start < TT_CHUNK ? n - start : TT_CHUNK;
        if (in_place) {
            const float *xf = (const float *)x->data + start, *yf = (const float *)y->data + start;
            acc[0] += table_f32[e](xf, yf, m, q);
            if (kind == TT_ERR_WEIGHTED_PERCENT)
                acc[1] += table_f32[WMAPE_SCALE](xf, yf, m, q);
            continue;
        }
        for (int64_t j = 0; j < d; j++) {
            (void)tt_load_scores(x, start, m, j, xb); /* (a NaN is found through the sum) */
            (void)tt_load_scores(y, start, m, j, yb);
            acc[per_column ? j : 0] += fn(xb, yb, m, q);
            if (kind == TT_ERR_WEIGHTED_PERCENT)
                acc[1] += second(xb, yb, m, q);
        }
    }
    if (kind == TT_ERR_SYM_PERCENT)
        acc[0] *= 2.0; /* 2 sum(t), as torch's 2.0 * terms.sum() */
}

/* ---- the search of a refused batch (rare) ---------------------------------------------------- */

static double element(const tt_view *v, int64_t i, int64_t j)
{
    const char *p = v->data + i * tt_step(v, 0) + (v->ndim == 2 ? j * tt_step(v, 1) : 0);
    return tt_load_score(p, v->dtype);
}

/* The first element (flat, row-major) for which bad(value, bound) holds; -1 when none. */
static int64_t first_bad(const tt_view *v, int (*bad)(double, double), double bound, double *value)
{
    const int64_t n = v->shape[0], d = v->ndim == 2 ? v->shape[1] : 1;
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < d; j++) {
            const double a = element(v, i, j);
            if (bad(a, bound)) {
                *value = a;
                return i * d + j;
            }
        }
    return -1;
}

static int not_finite(double a, double bound) { return (void)bound, !isfinite(a); }
static int at_most(double a, double bound) { return a <= bound; }
static int below(double a, double bound) { return a < bound; }

/* The first row of v whose sum is 0; -1 when none. */
static int64_t first_zero_row(const tt_view *v)
{
    const int64_t n = v->shape[0], d = v->shape[1];
    for (int64_t i = 0; i < n; i++) {
        double s = 0.0;
        for (int64_t j = 0; j < d; j++)
            s += element(v, i, j);
        if (s == 0.0)
            return i;
    }
    return -1;
}

tt_status tt_error_search(const tt_view *x, const tt_view *y, int64_t kind, double param,
                          tt_error *err)
{
    const tt_view *both[2] = {x, y};
    const char *names[2] = {"x", "y"};
    double value = 0.0;
    for (int k = 0; k < 2; k++) {
        const int64_t at = first_bad(both[k], not_finite, 0.0, &value);
        if (at >= 0)
            return tt_fail(err, TT_EVALUE, names[k],
                           "expected finite values, got %g at flat index %lld", value,
                           (long long)at);
    }
    if (kind == TT_ERR_SQUARED_LOG)
        for (int k = 0; k < 2; k++) {
            const int64_t at = first_bad(both[k], at_most, -1.0, &value);
            if (at >= 0)
                return tt_fail(
                    err, TT_EVALUE, names[k],
                    "expected values > -1 (log(1 + x) is taken), got %g at flat index %lld", value,
                    (long long)at);
        }
    if ((kind == TT_ERR_KL || kind == TT_ERR_JS) && param == 0.0) {
        for (int k = 0; k < 2; k++) {
            const int64_t at = first_bad(both[k], below, 0.0, &value);
            if (at >= 0)
                return tt_fail(err, TT_EVALUE, names[k],
                               "expected probabilities >= 0, got %g at flat index %lld", value,
                               (long long)at);
        }
        for (int k = 0; k < 2; k++) {
            const int64_t row = first_zero_row(both[k]);
            if (row >= 0)
                return tt_fail(err, TT_EVALUE, names[k],
                               "expected rows with a positive sum, got row %lld", (long long)row);
        }
    }
    return TT_OK;
}

/* ---- checks ----------------------------------------------------------------------------------- */

static int64_t numel(const tt_view *v)
{
    int64_t n = 1;
    for (int d = 0; d < v->ndim && d < TT_MAX_NDIM; d++)
        n *= v->shape[d];
    return n;
}

/* v: a contiguous CPU tensor of `dtype` with `k` elements (any shape: a 0-d state is one). */
static tt_status check_flat_out(const tt_view *v, const char *arg, tt_dtype dtype, int64_t k,
                                tt_error *err)
{
    char got[96];
    if (v->dtype != dtype || numel(v) != k)
        return tt_fail(err, v->dtype != dtype ? TT_ETYPE : TT_EVALUE, arg,
                       "expected %s with %lld element(s), got %s", tt_dtype_name(dtype),
                       (long long)k, tt_describe(v, got, sizeof got));
    int64_t expected = 1;
    for (int d = v->ndim - 1; d >= 0 && d < TT_MAX_NDIM; d--) {
        if (v->shape[d] != 1 && v->stride[d] != expected)
            return tt_fail(err, TT_EVALUE, arg, "expected a contiguous tensor, got a strided %s",
                           tt_describe(v, got, sizeof got));
        expected *= v->shape[d];
    }
    return tt_check_cpu(v, arg, err);
}

/* The number of float64 sums kind adds into `sums` for x. */
static int64_t sums_size(const tt_view *x, int64_t kind)
{
    if (kind <= TT_ERR_LOG_COSH)
        return x->ndim == 2 ? x->shape[1] : 1;
    return kind == TT_ERR_WEIGHTED_PERCENT ? 2 : 1;
}

static tt_status check_all(const tt_view *sums, const tt_view *count, const tt_view *rows,
                           const tt_view *x, const tt_view *y, int64_t kind, double param,
                           tt_error *err)
{
    char got[96], want[96];
    if (kind < 0 || kind >= TT_ERR_KINDS)
        return tt_fail(err, TT_EVALUE, "kind", "expected 0 to %d, got %lld", TT_ERR_KINDS - 1,
                       (long long)kind);
    const int row_kind = kind >= TT_ERR_COSINE;
    tt_status st = tt_check_scores(x, "x", row_kind || x->ndim != 1 ? 2 : 1, err);
    if (st == TT_OK)
        st = tt_check_scores(y, "y", x->ndim, err);
    if (st != TT_OK)
        return st;
    if (y->shape[0] != x->shape[0] || (x->ndim == 2 && y->shape[1] != x->shape[1]))
        return tt_fail(err, TT_EVALUE, "y", "expected the shape of x (%s), got %s",
                       tt_describe(x, want, sizeof want), tt_describe(y, got, sizeof got));
    if (kind == TT_ERR_MINKOWSKI && !(param >= 1.0 && isfinite(param)))
        return tt_fail(err, TT_EVALUE, "param", "expected a finite p >= 1, got %g", param);
    if ((kind == TT_ERR_KL || kind == TT_ERR_JS) && param != 0.0 && param != 1.0)
        return tt_fail(err, TT_EVALUE, "param",
                       "expected 0 (probabilities) or 1 (log_prob), got %g", param);
    if (sums && (st = check_flat_out(sums, "sums", TT_F64, sums_size(x, kind), err)) != TT_OK)
        return st;
    if (count && (st = check_flat_out(count, "count", TT_I64, 1, err)) != TT_OK)
        return st;
    if (rows && !row_kind)
        return tt_fail(err, TT_EVALUE, "rows", "expected None for kind %lld (not a per-row kind)",
                       (long long)kind);
    if (rows && (st = check_flat_out(rows, "rows", TT_F64, x->shape[0], err)) != TT_OK)
        return st;
    return TT_OK;
}

/* ---- entry ------------------------------------------------------------------------------------ */

tt_status tt_error_sums(const tt_view *sums, const tt_view *count, const tt_view *rows,
                        const tt_view *x, const tt_view *y, int64_t kind, double param,
                        tt_error *err)
{
    tt_status st = check_all(sums, count, rows, x, y, kind, param, err);
    if (st != TT_OK)
        return st;
    const int64_t n = x->shape[0], d = x->ndim == 2 ? x->shape[1] : 1;
    const int64_t added = kind >= TT_ERR_ABS_PERCENT && kind <= TT_ERR_WEIGHTED_PERCENT ? n * d : n;
    int64_t total_count = 0;
    if (count && __builtin_add_overflow(*(const int64_t *)count->data, added, &total_count))
        return tt_fail(err, TT_EVALUE, "count", "expected a count that fits int64 after %lld more",
                       (long long)added);
    const int64_t k = sums_size(x, kind);
    double small[8] = {0.0};
    double *acc = k <= 8 ? small : calloc((size_t)k, sizeof *acc);
    if (acc == NULL)
        return tt_fail(err, TT_ENOMEM, "sums", "out of memory for %lld sums", (long long)k);
    double *values = NULL;
    double summary = 0.0;
    if (kind >= TT_ERR_COSINE) {
        if (rows && n > 0 && (values = malloc((size_t)n * sizeof *values)) == NULL) {
            st = tt_fail(err, TT_ENOMEM, "rows", "out of memory for %lld rows", (long long)n);
            goto done;
        }
        summary = tt_error_rows(x, y, kind, param == 1.0, values, acc);
    } else {
        column_sums(x, y, kind, param, acc);
        for (int64_t j = 0; j < k; j++)
            summary += acc[j];
    }
    if (!isfinite(summary) && (st = tt_error_search(x, y, kind, param, err)) != TT_OK)
        goto done;
    if (sums) {
        double *dst = (double *)sums->data;
        for (int64_t j = 0; j < k; j++)
            dst[j] += acc[j];
    }
    if (count)
        *(int64_t *)count->data = total_count;
    if (values)
        memcpy(rows->data, values, (size_t)n * sizeof *values);
done:
    free(values);
    if (acc != small)
        free(acc);
    return st;
}
