/*
 * moments.c: count, sum, min, max, mean and M2 per column, and the co-moment of two columns,
 * for MSE/MAE-style means, variance, R2, Pearson and explained variance. A batch is reduced
 * with an exact two-pass in float64 (mean first, then squared deviations from it), and the
 * batch result is folded into the running state with Chan's merge:
 *   n = na + nb,  d = mean_b - mean_a,  mean = mean_a + d * nb / n,
 *   m2 = m2_a + m2_b + d^2 * na * nb / n,  c_xy = c_a + c_b + dx * dy * na * nb / n.
 * The batch is only merged after the whole batch has been read and checked, so a NaN leaves
 * the state untouched.
 */
#include "kernels/moments.h"

#include <math.h>
#include <stdlib.h>

#include "kernels/simd.h"
#include "kernels/vec_math.h"

/* the four-lane vectors live in registers of inlined code only: no ABI crossing */
#pragma GCC diagnostic ignored "-Wpsabi"

/* Both state layouts are [D, 6]: the row helpers below step by 6. */
_Static_assert(TT_MOM_WIDTH == 6 && TT_CO_WIDTH == 6, "moments and co-moments rows are 6 wide");

static tt_status check_state(const tt_view *state, const char *arg, int64_t columns, tt_error *err)
{
    const int64_t shape[2] = {columns, 6};
    return tt_check_out(state, arg, TT_F64, 2, shape, err);
}

static int64_t columns_of(const tt_view *x) { return x->ndim == 2 ? x->shape[1] : 1; }

static void merge_comoment_row(double *a, const double *b)
{
    const double na = a[TT_CO_N], nb = b[TT_CO_N];
    if (nb == 0.0)
        return;
    if (na == 0.0) {
        memcpy(a, b, TT_CO_WIDTH * sizeof *a);
        return;
    }
    const double total = na + nb, weight = na * nb / total;
    const double dx = b[TT_CO_MEAN_X] - a[TT_CO_MEAN_X], dy = b[TT_CO_MEAN_Y] - a[TT_CO_MEAN_Y];
    a[TT_CO_MEAN_X] += dx * (nb / total);
    a[TT_CO_MEAN_Y] += dy * (nb / total);
    a[TT_CO_M2_X] += b[TT_CO_M2_X] + dx * dx * weight;
    a[TT_CO_M2_Y] += b[TT_CO_M2_Y] + dy * dy * weight;
    a[TT_CO_C_XY] += b[TT_CO_C_XY] + dx * dy * weight;
    a[TT_CO_N] = total;
}

/* A batch reducer: one column of x (and of `second`: weights or y) into a state row; returns 1
 * with err filled on a bad value. */
typedef int (*batch_fn)(const tt_view *x, const tt_view *second, int64_t col, double *row,
                        tt_error *err);

/* Reduces every column of the batch into scratch, then merges the scratch into the state rows
 * (float64 [D, 6]): a bad value anywhere leaves the state untouched. */
static tt_status update_rows(const tt_view *state, const tt_view *x, const tt_view *second,
                             batch_fn batch_row, void (*merge_row)(double *, const double *),
                             tt_error *err)
{
    const int64_t columns = columns_of(x);
    double *batch = malloc((size_t)(columns > 0 ? columns : 1) * 6 * sizeof *batch);
    if (batch == NULL)
        return tt_fail(err, TT_ENOMEM, "x", "out of memory for %lld columns", (long long)columns);
    for (int64_t col = 0; col < columns; col++) {
        if (batch_row(x, second, col, batch + col * 6, err)) {
            free(batch);
            return err->status;
        }
    }
    for (int64_t col = 0; col < columns; col++)
        merge_row((double *)state->data + col * 6, batch + col * 6);
    free(batch);
    return TT_OK;
}

/* ---- moments ------------------------------------------------------------------------------ */

/* The unweighted loops keep eight partial sums: a single running sum is one long chain of
 * dependent additions, while eight chains overlap (two vectors of four lanes below). Both paths
 * add in the same order, so they give the same bits. */
#define LANES 8
#define FOLD(s) ((((s)[0] + (s)[1]) + ((s)[2] + (s)[3])) + (((s)[4] + (s)[5]) + ((s)[6] + (s)[7])))

static void sum_lo_hi(const double *v, int64_t n, double *sum, double *lo, double *hi)
{
    double s[LANES] = {0.0}, low = *lo, high = *hi;
    int64_t i = 0;
    for (; i + LANES <= n; i += LANES) {
        for (int k = 0; k < LANES; k++) {
            s[k] += v[i + k];
            low = v[i + k] < low ? v[i + k] : low;
            high = v[i + k] > high ? v[i + k] : high;
        }
    }
    for (; i < n; i++) {
        s[0] += v[i];
        low = v[i] < low ? v[i] : low;
        high = v[i] > high ? v[i] : high;
    }
    *sum += FOLD(s);
    *lo = low;
    *hi = high;
}

static double squared_deviations(const double *v, int64_t n, double mean)
{
    double s[LANES] = {0.0};
    int64_t i = 0;
    for (; i + LANES <= n; i += LANES)
        for (int k = 0; k < LANES; k++)
            s[k] += (v[i + k] - mean) * (v[i + k] - mean);
    for (; i < n; i++)
        s[0] += (v[i] - mean) * (v[i] - mean);
    return FOLD(s);
}

/* A column of contiguous float32 or float64 (an [N] or [N, 1] batch, the usual case) is read in
 * place: no chunk buffer, two vectors of four lanes (vec_math.h's), compiled a second time for AVX2. The sums are
 * the same chunked eight-lane sums as above (the same bits); a NaN makes the sum NaN, and then
 * the buffered path below finds it. */
#define CONTIGUOUS(NAME, T, ATTR)                                                                  \
    ATTR static void NAME(const T *v, int64_t rows, double *row)                                   \
    {                                                                                              \
        double sum = 0.0, m2 = 0.0;                                                                \
        tt_v4d lo = tt_vec_splat(INFINITY), hi = tt_vec_splat(-INFINITY), lo2 = lo, hi2 = hi;      \
        for (int64_t start = 0; start < rows; start += TT_CHUNK) {                                 \
            const int64_t len = rows - start < TT_CHUNK ? rows - start : TT_CHUNK;                 \
            const T *c = v + start;                                                                \
            tt_v4d s = tt_vec_splat(0.0), t = tt_vec_splat(0.0);                                   \
            int64_t i = 0;                                                                         \
            for (; i + LANES <= len; i += LANES) {                                                 \
                const tt_v4d a = tt_vec_load(c + i), b = tt_vec_load(c + i + 4);                   \
                s += a;                                                                            \
                t += b;                                                                            \
                lo = tt_vec_select(a < lo, a, lo);                                                 \
                hi = tt_vec_select(a > hi, a, hi);                                                 \
                lo2 = tt_vec_select(b < lo2, b, lo2);                                              \
                hi2 = tt_vec_select(b > hi2, b, hi2);                                              \
            }                                                                                      \
            for (; i < len; i++) {                                                                 \
                const double a = (double)c[i];                                                     \
                s[0] += a;                                                                         \
                lo[0] = a < lo[0] ? a : lo[0];                                                     \
                hi[0] = a > hi[0] ? a : hi[0];                                                     \
            }                                                                                      \
            sum += ((s[0] + s[1]) + (s[2] + s[3])) + ((t[0] + t[1]) + (t[2] + t[3]));              \
        }                                                                                          \
        const double n = (double)rows, mean = rows > 0 ? sum / n : 0.0;                            \
        for (int64_t start = 0; start < rows && sum == sum; start += TT_CHUNK) {                   \
            const int64_t len = rows - start < TT_CHUNK ? rows - start : TT_CHUNK;                 \
            const T *c = v + start;                                                                \
            tt_v4d s = tt_vec_splat(0.0), t = tt_vec_splat(0.0);                                   \
            int64_t i = 0;                                                                         \
            for (; i + LANES <= len; i += LANES) {                                                 \
                const tt_v4d d = tt_vec_load(c + i) - mean, e = tt_vec_load(c + i + 4) - mean;     \
                s += d * d;                                                                        \
                t += e * e;                                                                        \
            }                                                                                      \
            for (; i < len; i++)                                                                   \
                s[0] += ((double)c[i] - mean) * ((double)c[i] - mean);                             \
            m2 += ((s[0] + s[1]) + (s[2] + s[3])) + ((t[0] + t[1]) + (t[2] + t[3]));               \
        }                                                                                          \
        lo = tt_vec_select(lo2 < lo, lo2, lo);                                                     \
        hi = tt_vec_select(hi2 > hi, hi2, hi);                                                     \
        row[TT_MOM_N] = n;                                                                         \
        row[TT_MOM_SUM] = sum;                                                                     \
        row[TT_MOM_MEAN] = mean;                                                                   \
        row[TT_MOM_M2] = m2;                                                                       \
        row[TT_MOM_MIN] = fmin(fmin(lo[0], lo[1]), fmin(lo[2], lo[3]));                            \
        row[TT_MOM_MAX] = fmax(fmax(hi[0], hi[1]), fmax(hi[2], hi[3]));                            \
    }

CONTIGUOUS(contiguous_f32_base, float, )
CONTIGUOUS(contiguous_f64_base, double, )
#ifdef TT_HAVE_AVX2_TARGET
CONTIGUOUS(contiguous_f32_avx2, float, __attribute__((target("avx2"))))
CONTIGUOUS(contiguous_f64_avx2, double, __attribute__((target("avx2"))))
#endif

/* The moments of a unit-stride float32 / float64 column into row[6]; 0 when the column is not
 * one, or holds a NaN (row then holds garbage: the caller takes the buffered path). */
static int contiguous_moments(const tt_view *x, int64_t col, double *row)
{
    const int f32 = x->dtype == TT_F32, f64 = x->dtype == TT_F64;
    if (!(f32 || f64) || (x->shape[0] > 1 && x->stride[0] != 1))
        return 0;
    const char *base = x->data + (x->ndim == 2 ? col * tt_step(x, 1) : 0);
#ifdef TT_HAVE_AVX2_TARGET
    if (tt_simd_level() >= TT_SIMD_AVX2) {
        if (f32)
            contiguous_f32_avx2((const float *)base, x->shape[0], row);
        else
            contiguous_f64_avx2((const double *)base, x->shape[0], row);
        return row[TT_MOM_SUM] == row[TT_MOM_SUM];
    }
#endif
    if (f32)
        contiguous_f32_base((const float *)base, x->shape[0], row);
    else
        contiguous_f64_base((const double *)base, x->shape[0], row);
    return row[TT_MOM_SUM] == row[TT_MOM_SUM];
}

/* Batch moments of column `col` into row[6]; returns 1 and fills err on NaN or a bad weight. */
static int batch_moments(const tt_view *x, const tt_view *weights, int64_t col, double *row,
                         tt_error *err)
{
    double values[TT_CHUNK], w[TT_CHUNK];
    const int64_t rows = x->shape[0];
    double n = 0.0, sum = 0.0, lo = INFINITY, hi = -INFINITY;
    if (weights == NULL && contiguous_moments(x, col, row))
        return 0;
    for (int64_t start = 0; start < rows; start += TT_CHUNK) {
        const int64_t len = rows - start < TT_CHUNK ? rows - start : TT_CHUNK;
        int64_t nan_at = tt_load_scores(x, start, len, col, values);
        if (nan_at >= 0) {
            tt_fail(err, TT_EVALUE, "x", "NaN at sample %lld, column %lld",
                    (long long)(start + nan_at), (long long)col);
            return 1;
        }
        if (weights != NULL) {
            nan_at = tt_load_scores(weights, start, len, 0, w);
            for (int64_t i = 0; i < len && nan_at < 0; i++)
                if (w[i] < 0.0 || isinf(w[i]))
                    nan_at = i;
            if (nan_at >= 0) {
                tt_fail(err, TT_EVALUE, "weights",
                        "expected finite weights >= 0, got %g at sample %lld", w[nan_at],
                        (long long)(start + nan_at));
                return 1;
            }
        }
        if (weights == NULL) {
            sum_lo_hi(values, len, &sum, &lo, &hi);
            n += (double)len;
            continue;
        }
        for (int64_t i = 0; i < len; i++) {
            n += w[i];
            sum += w[i] * values[i];
            if (w[i] > 0.0 && values[i] < lo)
                lo = values[i];
            if (w[i] > 0.0 && values[i] > hi)
                hi = values[i];
        }
    }
    const double mean = n > 0.0 ? sum / n : 0.0;
    double m2 = 0.0;
    for (int64_t start = 0; start < rows && n > 0.0; start += TT_CHUNK) {
        const int64_t len = rows - start < TT_CHUNK ? rows - start : TT_CHUNK;
        tt_load_scores(x, start, len, col, values);
        if (weights == NULL) {
            m2 += squared_deviations(values, len, mean);
            continue;
        }
        tt_load_scores(weights, start, len, 0, w);
        for (int64_t i = 0; i < len; i++) {
            const double d = values[i] - mean;
            m2 += w[i] * d * d;
        }
    }
    row[TT_MOM_N] = n;
    row[TT_MOM_SUM] = sum;
    row[TT_MOM_MEAN] = mean;
    row[TT_MOM_M2] = m2;
    row[TT_MOM_MIN] = lo;
    row[TT_MOM_MAX] = hi;
    return 0;
}

tt_status tt_moments_update(const tt_view *state, const tt_view *x, const tt_view *weights,
                            tt_error *err)
{
    char got[96];
    if (tt_check_values(x, "x", err) || check_state(state, "state", columns_of(x), err))
        return err->status;
    if (weights != NULL) {
        if (tt_check_scores(weights, "weights", 1, err))
            return err->status;
        if (weights->shape[0] != x->shape[0])
            return tt_fail(err, TT_EVALUE, "weights", "expected [%lld] (one per sample), got %s",
                           (long long)x->shape[0], tt_describe(weights, got, sizeof got));
    }
    return update_rows(state, x, weights, batch_moments, tt_moments_merge_row, err);
}

/* state float64 [D, 6] (contiguous, written) and other float64 [D, 6] (any strides, read). */
static tt_status check_merge(const tt_view *state, const tt_view *other, tt_error *err)
{
    char got[96];
    if (other->dtype != TT_F64 || other->ndim != 2 || other->shape[1] != 6)
        return tt_fail(err, other->dtype != TT_F64 ? TT_ETYPE : TT_EVALUE, "other",
                       "expected a float64 state [D, 6], got %s",
                       tt_describe(other, got, sizeof got));
    if (tt_check_cpu(other, "other", err))
        return err->status;
    return check_state(state, "state", other->shape[0], err);
}

/* Row `col` of a possibly strided [D, 6] float64 view. */
static void read_state_row(const tt_view *v, int64_t col, double *row)
{
    for (int c = 0; c < 6; c++)
        row[c] = *(const double *)(v->data + col * tt_step(v, 0) + c * tt_step(v, 1));
}

static tt_status merge_rows(const tt_view *state, const tt_view *other,
                            void (*merge_row)(double *, const double *), tt_error *err)
{
    if (check_merge(state, other, err))
        return err->status;
    for (int64_t col = 0; col < other->shape[0]; col++) {
        double row[6];
        read_state_row(other, col, row);
        merge_row((double *)state->data + col * 6, row);
    }
    return TT_OK;
}

tt_status tt_moments_merge(const tt_view *state, const tt_view *other, tt_error *err)
{
    return merge_rows(state, other, tt_moments_merge_row, err);
}

/* ---- co-moments --------------------------------------------------------------------------- */

static int batch_comoments(const tt_view *x, const tt_view *y, int64_t col, double *row,
                           tt_error *err)
{
    double xs[TT_CHUNK], ys[TT_CHUNK];
    const int64_t rows = x->shape[0];
    double sum_x = 0.0, sum_y = 0.0;
    for (int64_t start = 0; start < rows; start += TT_CHUNK) {
        const int64_t len = rows - start < TT_CHUNK ? rows - start : TT_CHUNK;
        const int64_t nan_x = tt_load_scores(x, start, len, col, xs);
        const int64_t nan_y = tt_load_scores(y, start, len, col, ys);
        if (nan_x >= 0 || nan_y >= 0) {
            const int64_t at = nan_x >= 0 ? nan_x : nan_y;
            tt_fail(err, TT_EVALUE, nan_x >= 0 ? "x" : "y", "NaN at sample %lld, column %lld",
                    (long long)(start + at), (long long)col);
            return 1;
        }
        for (int64_t i = 0; i < len; i++) {
            sum_x += xs[i];
            sum_y += ys[i];
        }
    }
    const double n = (double)rows;
    const double mean_x = rows ? sum_x / n : 0.0, mean_y = rows ? sum_y / n : 0.0;
    double m2_x = 0.0, m2_y = 0.0, c_xy = 0.0;
    for (int64_t start = 0; start < rows; start += TT_CHUNK) {
        const int64_t len = rows - start < TT_CHUNK ? rows - start : TT_CHUNK;
        tt_load_scores(x, start, len, col, xs);
        tt_load_scores(y, start, len, col, ys);
        for (int64_t i = 0; i < len; i++) {
            const double dx = xs[i] - mean_x, dy = ys[i] - mean_y;
            m2_x += dx * dx;
            m2_y += dy * dy;
            c_xy += dx * dy;
        }
    }
    row[TT_CO_N] = n;
    row[TT_CO_MEAN_X] = mean_x;
    row[TT_CO_MEAN_Y] = mean_y;
    row[TT_CO_M2_X] = m2_x;
    row[TT_CO_M2_Y] = m2_y;
    row[TT_CO_C_XY] = c_xy;
    return 0;
}

tt_status tt_comoments_update(const tt_view *state, const tt_view *x, const tt_view *y,
                              tt_error *err)
{
    char got[96], want[96];
    if (tt_check_values(x, "x", err) || tt_check_values(y, "y", err))
        return err->status;
    if (x->ndim != y->ndim || x->shape[0] != y->shape[0] || columns_of(x) != columns_of(y))
        return tt_fail(err, TT_EVALUE, "y", "expected the shape of x (%s), got %s",
                       tt_describe(x, want, sizeof want), tt_describe(y, got, sizeof got));
    if (check_state(state, "state", columns_of(x), err))
        return err->status;
    return update_rows(state, x, y, batch_comoments, merge_comoment_row, err);
}

tt_status tt_comoments_merge(const tt_view *state, const tt_view *other, tt_error *err)
{
    return merge_rows(state, other, merge_comoment_row, err);
}
