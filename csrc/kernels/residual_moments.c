/*
 * residual_moments.c: R2Score's and ExplainedVariance's batch, the moments of r = target - preds
 * and of the target per output, from one read of preds (x) and target (y). The torch path made
 * the float64 residuals (a full-size temporary), summed them for the finiteness check, then ran
 * the moments kernel twice (two passes each): six passes over N D values. Here each chunk of
 * TT_CHUNK rows of a column (read in place when it is unit-stride float32 / float64, else widened
 * into buffers that stay in L1) is reduced exactly in two passes over the chunk (mean, then the
 * squared deviations from it) and merged into the column's batch moments with Chan's formula
 * (moments.h); the batch is merged into the state only after the verdict: the sums are NaN or inf
 * only if an input is, and then the inputs are searched for the element to name.
 */
#include "kernels/residual_moments.h"

#include <math.h>
#include <stdlib.h>

#include "kernels/error_terms.h"
#include "kernels/moments.h"
#include "kernels/simd.h"
#include "kernels/vec_math.h"

/* the four-lane vectors live in registers of inlined code only: no ABI crossing */
#pragma GCC diagnostic ignored "-Wpsabi"

#define LANES 8 /* two vectors of four lanes: two chains of additions overlap */

/* The moments of one chunk (n > 0 values) into res[6] (of y - x) and tgt[6] (of y): the sums and
 * the target's extremes in one pass, the squared deviations from the chunk's means and the
 * residual's extremes in a second (over data in L1); each pass keeps eight chains (two vectors
 * per quantity) so that no chain of dependent operations limits the loop. Compiled again for
 * AVX2; no FMA (the build has -ffp-contract=off): every copy gives the same bits. */
#define MIN4(v) fmin(fmin((v)[0], (v)[1]), fmin((v)[2], (v)[3]))
#define MAX4(v) fmax(fmax((v)[0], (v)[1]), fmax((v)[2], (v)[3]))
#define SUM8(a, b)                                                                                 \
    ((((a)[0] + (a)[1]) + ((a)[2] + (a)[3])) + (((b)[0] + (b)[1]) + ((b)[2] + (b)[3])))
#define CHUNK_MOMENTS(NAME, ATTR, LOWER, HIGHER)                                                   \
    ATTR static void NAME(const double *restrict xs, const double *restrict ys, int64_t n,         \
                          double *res, double *tgt)                                                \
    {                                                                                              \
        tt_v4d s0 = tt_vec_splat(0.0), s1 = s0, s2 = s0, s3 = s0;                                  \
        tt_v4d lo0 = tt_vec_splat(INFINITY), lo1 = lo0, hi0 = tt_vec_splat(-INFINITY), hi1 = hi0;  \
        int64_t i = 0;                                                                             \
        for (; i + LANES <= n; i += LANES) { /* sums of r and y; extremes of y */                  \
            const tt_v4d ya = tt_vec_load(ys + i), yb = tt_vec_load(ys + i + 4);                   \
            s0 += ya - tt_vec_load(xs + i);                                                        \
            s1 += yb - tt_vec_load(xs + i + 4);                                                    \
            s2 += ya;                                                                              \
            s3 += yb;                                                                              \
            LOWER(lo0, ya);                                                                        \
            LOWER(lo1, yb);                                                                        \
            HIGHER(hi0, ya);                                                                       \
            HIGHER(hi1, yb);                                                                       \
        }                                                                                          \
        for (; i < n; i++) {                                                                       \
            const double yv = (double)ys[i];                                                       \
            s0[0] += yv - (double)xs[i];                                                           \
            s2[0] += yv;                                                                           \
            lo0[0] = yv < lo0[0] ? yv : lo0[0];                                                    \
            hi0[0] = yv > hi0[0] ? yv : hi0[0];                                                    \
        }                                                                                          \
        const double sum_r = SUM8(s0, s1), sum_y = SUM8(s2, s3);                                   \
        const double mean_r = sum_r / (double)n, mean_y = sum_y / (double)n;                       \
        tgt[TT_MOM_MIN] = fmin(MIN4(lo0), MIN4(lo1));                                              \
        tgt[TT_MOM_MAX] = fmax(MAX4(hi0), MAX4(hi1));                                              \
        s0 = s1 = s2 = s3 = tt_vec_splat(0.0);                                                     \
        lo0 = lo1 = tt_vec_splat(INFINITY);                                                        \
        hi0 = hi1 = tt_vec_splat(-INFINITY);                                                       \
        for (i = 0; i + LANES <= n; i += LANES) { /* squared deviations; extremes of r */          \
            const tt_v4d ya = tt_vec_load(ys + i), yb = tt_vec_load(ys + i + 4);                   \
            const tt_v4d a = ya - tt_vec_load(xs + i), b = yb - tt_vec_load(xs + i + 4);           \
            const tt_v4d da = a - mean_r, db = b - mean_r, ca = ya - mean_y, cb = yb - mean_y;     \
            s0 += da * da;                                                                         \
            s1 += db * db;                                                                         \
            s2 += ca * ca;                                                                         \
            s3 += cb * cb;                                                                         \
            LOWER(lo0, a);                                                                         \
            LOWER(lo1, b);                                                                         \
            HIGHER(hi0, a);                                                                        \
            HIGHER(hi1, b);                                                                        \
        }                                                                                          \
        for (; i < n; i++) {                                                                       \
            const double yv = (double)ys[i], r = yv - (double)xs[i];                               \
            const double dr = r - mean_r, c = yv - mean_y;                                         \
            s0[0] += dr * dr;                                                                      \
            s2[0] += c * c;                                                                        \
            lo0[0] = r < lo0[0] ? r : lo0[0];                                                      \
            hi0[0] = r > hi0[0] ? r : hi0[0];                                                      \
        }                                                                                          \
        res[TT_MOM_N] = tgt[TT_MOM_N] = (double)n;                                                 \
        res[TT_MOM_SUM] = sum_r;                                                                   \
        tgt[TT_MOM_SUM] = sum_y;                                                                   \
        res[TT_MOM_MEAN] = mean_r;                                                                 \
        tgt[TT_MOM_MEAN] = mean_y;                                                                 \
        res[TT_MOM_M2] = SUM8(s0, s1);                                                             \
        tgt[TT_MOM_M2] = SUM8(s2, s3);                                                             \
        res[TT_MOM_MIN] = fmin(MIN4(lo0), MIN4(lo1));                                              \
        res[TT_MOM_MAX] = fmax(MAX4(hi0), MAX4(hi1));                                              \
    }

/* lo = v < lo ? v : lo per lane (a NaN v keeps lo): a compare and a blend in the generic copy,
 * one vminpd (the same rule) in the AVX2 copy; likewise for the maximum. */
#define LOWER_ANY(lo, v) lo = tt_vec_select((v) < (lo), (v), (lo))
#define HIGHER_ANY(hi, v) hi = tt_vec_select((v) > (hi), (v), (hi))
CHUNK_MOMENTS(chunk_base, , LOWER_ANY, HIGHER_ANY)
#ifdef TT_HAVE_AVX2_TARGET
#define LOWER_AVX(lo, v) lo = __builtin_ia32_minpd256((v), (lo))
#define HIGHER_AVX(hi, v) hi = __builtin_ia32_maxpd256((v), (hi))
CHUNK_MOMENTS(chunk_avx2, __attribute__((target("avx2"))), LOWER_AVX, HIGHER_AVX)
#endif

typedef void (*chunk_fn)(const double *, const double *, int64_t, double *, double *);

/* dst[i] = src[i] widened to double (unit stride), one vectorised loop per SIMD level. */
#define WIDEN(NAME, ATTR)                                                                          \
    ATTR static void NAME(const float *restrict src, int64_t n, double *restrict dst)              \
    {                                                                                              \
        for (int64_t i = 0; i < n; i++)                                                            \
            dst[i] = (double)src[i];                                                               \
    }
WIDEN(widen_base, )
#ifdef TT_HAVE_AVX2_TARGET
WIDEN(widen_avx2, __attribute__((target("avx2"))))
#endif

static void empty_row(double *row)
{
    row[TT_MOM_N] = row[TT_MOM_SUM] = row[TT_MOM_MEAN] = row[TT_MOM_M2] = 0.0;
    row[TT_MOM_MIN] = INFINITY;
    row[TT_MOM_MAX] = -INFINITY;
}

/* Whether column `col` of v is `dtype` with unit stride along the samples (read in place). */
static int unit_column(const tt_view *v, tt_dtype dtype)
{
    return v->dtype == dtype && (v->shape[0] <= 1 || v->stride[0] == 1);
}

/* The batch moments of column `col` into res[6] and tgt[6] (both start empty). */
static void column_moments(const tt_view *x, const tt_view *y, int64_t col, double *res,
                           double *tgt)
{
    chunk_fn chunk = chunk_base;
    void (*widen)(const float *, int64_t, double *) = widen_base;
#ifdef TT_HAVE_AVX2_TARGET
    if (tt_simd_level() >= TT_SIMD_AVX2) {
        chunk = chunk_avx2;
        widen = widen_avx2;
    }
#endif
    const int64_t n = x->shape[0];
    const char *xd = x->data + (x->ndim == 2 ? col * tt_step(x, 1) : 0);
    const char *yd = y->data + (y->ndim == 2 ? col * tt_step(y, 1) : 0);
    const int x_f64 = unit_column(x, TT_F64), y_f64 = unit_column(y, TT_F64);
    const int x_f32 = unit_column(x, TT_F32), y_f32 = unit_column(y, TT_F32);
    double xb[TT_CHUNK], yb[TT_CHUNK], r[6], t[6];
    empty_row(res);
    empty_row(tgt);
    for (int64_t start = 0; start < n; start += TT_CHUNK) {
        const int64_t m = n - start < TT_CHUNK ? n - start : TT_CHUNK;
        /* unit-stride float64 is read in place, unit-stride float32 widened by one vectorised
         * loop, anything else by the generic loader (a NaN is found through the sums) */
        const double *xs = xb, *ys = yb;
        if (x_f64)
            xs = (const double *)xd + start;
        else if (x_f32)
            widen((const float *)xd + start, m, xb);
        else
            (void)tt_load_scores(x, start, m, col, xb);
        if (y_f64)
            ys = (const double *)yd + start;
        else if (y_f32)
            widen((const float *)yd + start, m, yb);
        else
            (void)tt_load_scores(y, start, m, col, yb);
        chunk(xs, ys, m, r, t);
        tt_moments_merge_row(res, r);
        tt_moments_merge_row(tgt, t);
    }
}

static tt_status check_all(const tt_view *state, const tt_view *x, const tt_view *y, tt_error *err)
{
    char got[96], want[96];
    if (tt_check_values(x, "x", err) || tt_check_values(y, "y", err))
        return err->status;
    if (y->ndim != x->ndim || y->shape[0] != x->shape[0] ||
        (x->ndim == 2 && y->shape[1] != x->shape[1]))
        return tt_fail(err, TT_EVALUE, "y", "expected the shape of x (%s), got %s",
                       tt_describe(x, want, sizeof want), tt_describe(y, got, sizeof got));
    const int64_t d = x->ndim == 2 ? x->shape[1] : 1;
    const int64_t shape[2] = {2 * d, TT_MOM_WIDTH};
    return tt_check_out(state, "state", TT_F64, 2, shape, err);
}

tt_status tt_residual_moments(const tt_view *state, const tt_view *x, const tt_view *y,
                              tt_error *err)
{
    tt_status st = check_all(state, x, y, err);
    if (st != TT_OK)
        return st;
    const int64_t d = x->ndim == 2 ? x->shape[1] : 1;
    double small[2 * TT_MOM_WIDTH * 4] = {0.0};
    const size_t size = (size_t)(d > 0 ? d : 1) * 2 * TT_MOM_WIDTH;
    double *batch = d <= 4 ? small : calloc(size, sizeof *batch);
    if (batch == NULL)
        return tt_fail(err, TT_ENOMEM, "state", "out of memory for %lld outputs", (long long)d);
    double summary = 0.0;
    for (int64_t j = 0; j < d; j++) {
        double *res = batch + j * TT_MOM_WIDTH, *tgt = batch + (d + j) * TT_MOM_WIDTH;
        column_moments(x, y, j, res, tgt);
        summary += res[TT_MOM_SUM] + tgt[TT_MOM_SUM];
    }
    if (!isfinite(summary) && (st = tt_error_search(x, y, TT_ERR_SQUARED, 0.0, err)) != TT_OK)
        goto done;
    for (int64_t k = 0; k < 2 * d; k++)
        tt_moments_merge_row((double *)state->data + k * TT_MOM_WIDTH, batch + k * TT_MOM_WIDTH);
done:
    if (batch != small)
        free(batch);
    return st;
}
