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

#define LANES 4

typedef double (*chunk_fn)(const double *, const double *, int64_t, double);

/* The lane-summed terms of one chunk, one copy per kind (the term inlined into the loop). */
#define CHUNK_SUM(NAME, TERM)                                                                      \
    static double NAME(const double *restrict xs, const double *restrict ys, int64_t n, double q)  \
    {                                                                                              \
        double s[LANES] = {0.0, 0.0, 0.0, 0.0};                                                    \
        int64_t i = 0;                                                                             \
        for (; i + LANES <= n; i += LANES)                                                         \
            for (int l = 0; l < LANES; l++)                                                        \
                s[l] += TERM(xs[i + l], ys[i + l], q);                                             \
        for (; i < n; i++)                                                                         \
            s[0] += TERM(xs[i], ys[i], q);                                                         \
        return (s[0] + s[1]) + (s[2] + s[3]);                                                      \
    }

CHUNK_SUM(sum_squared, tt_term_squared)
CHUNK_SUM(sum_absolute, tt_term_absolute)
CHUNK_SUM(sum_log_cosh, tt_term_log_cosh)
CHUNK_SUM(sum_abs_percent, tt_term_abs_percent)
CHUNK_SUM(sum_sym_percent, tt_term_sym_percent)
CHUNK_SUM(sum_squared_log, tt_term_squared_log)
CHUNK_SUM(sum_minkowski, tt_term_minkowski)
CHUNK_SUM(sum_target_abs, tt_term_target_abs)

/* Indexed by kind (the element kinds; WMAPE's second sum is sum_target_abs). */
static const chunk_fn chunk_sums[TT_ERR_WEIGHTED_PERCENT + 1] = {
    sum_squared,     sum_absolute,    sum_log_cosh,  sum_abs_percent,
    sum_sym_percent, sum_squared_log, sum_minkowski, sum_absolute,
};

/* Minkowski's exponent as the kernel applies it: torch's pow copies for 1, multiplies for 2, 3. */
static double minkowski_code(double p)
{
    return p == 1.0 ? -1.0 : (p == 2.0 ? -2.0 : (p == 3.0 ? -3.0 : p));
}

/* The batch's sums into acc[K] (zeroed by the caller): per column, or all in acc[0] (WMAPE:
 * acc[0], acc[1]). */
static void column_sums(const tt_view *x, const tt_view *y, int64_t kind, double param, double *acc)
{
    const int64_t n = x->shape[0], d = x->ndim == 2 ? x->shape[1] : 1;
    const int per_column = kind <= TT_ERR_LOG_COSH;
    const chunk_fn fn = chunk_sums[kind];
    const double q = kind == TT_ERR_MINKOWSKI ? minkowski_code(param) : 0.0;
    double xb[TT_CHUNK], yb[TT_CHUNK];
    for (int64_t start = 0; start < n; start += TT_CHUNK) {
        const int64_t m = n - start < TT_CHUNK ? n - start : TT_CHUNK;
        for (int64_t j = 0; j < d; j++) {
            (void)tt_load_scores(x, start, m, j, xb); /* (a NaN is found through the sum) */
            (void)tt_load_scores(y, start, m, j, yb);
            acc[per_column ? j : 0] += fn(xb, yb, m, q);
            if (kind == TT_ERR_WEIGHTED_PERCENT)
                acc[1] += sum_target_abs(xb, yb, m, q);
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
