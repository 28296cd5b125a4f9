/*
 * error_rows.c: the per-row kinds of error_sums: cosine similarity and the KL / Jensen-Shannon
 * divergences of [N, d] rows, in float64 from one read of each chunk of rows (twice for the
 * divergences of probabilities: the row sums that scale each row to 1, then the terms). The
 * rows are walked in blocks of ROWS, column by column, with per-row partial sums in buffers;
 * the divergences of C-contiguous float32 / float64 rows of 8 to 256 values read each block of
 * rows as one flat run instead (the same terms and sums, the same bits).
 */
#include <math.h>

#include "kernels/error_terms.h"
#include "kernels/simd.h"
#include "kernels/vec_math.h"

/* the four-lane vectors live in registers of inlined code only: no ABI crossing */
#pragma GCC diagnostic ignored "-Wpsabi"

#define ROWS 256
#define LN2 0.69314718055994530942

/* torch.logaddexp of finite a, b. */
static double log_add_exp(double a, double b)
{
    const double hi = a > b ? a : b;
    return hi + log1p(exp(-fabs(a - b)));
}

/* p log(p / q) on four lanes (vec_math.h's log: a libm call per element costs 10-20 ns):
 * torch's xlogy(p, p) - xlogy(p, q) with one log instead of two (0 for p = 0; NaN for a NaN q;
 * inf for q = 0 < p). */
TT_VEC_INLINE tt_v4d vec_p_log_ratio(tt_v4d p, tt_v4d q)
{
    const tt_v4d t = tt_vec_select(p == 0.0, tt_vec_splat(0.0), p * tt_vec_log(p / q));
    return tt_vec_select(q != q, q, t);
}

/* The divergence terms of probabilities x[i] / sx[i], y[i] / sy[i] (each row scaled to sum 1),
 * added into acc[i] for i < m: KL's p log(p / q), or JS's p log(p / m) + q log(q / m) with
 * m = (p + q) / 2 (= xlogy(p, p) + xlogy(q, q) - xlogy(p + q, m), two logs instead of three).
 * Four rows at a time, the last ones padded with p = q = 1, so every SIMD level gives the same
 * bits; compiled a second time for AVX2. */
#define PROB_TERMS(NAME, ATTR)                                                                     \
    ATTR static void NAME(int64_t kind, const double *x, const double *y, const double *sx,        \
                          const double *sy, double *acc, int64_t m)                                \
    {                                                                                              \
        for (int64_t i = 0; i < m; i += TT_VEC_LANES) {                                            \
            tt_v4d p = tt_vec_splat(1.0), q = tt_vec_splat(1.0);                                   \
            if (i + TT_VEC_LANES <= m) {                                                           \
                p = tt_vec_load(x + i) / tt_vec_load(sx + i);                                      \
                q = tt_vec_load(y + i) / tt_vec_load(sy + i);                                      \
            } else {                                                                               \
                for (int l = 0; i + l < m; l++) {                                                  \
                    p[l] = x[i + l] / sx[i + l];                                                   \
                    q[l] = y[i + l] / sy[i + l];                                                   \
                }                                                                                  \
            }                                                                                      \
            tt_v4d t;                                                                              \
            if (kind == TT_ERR_KL) {                                                               \
                t = vec_p_log_ratio(p, q);                                                         \
            } else {                                                                               \
                const tt_v4d mid = 0.5 * (p + q);                                                  \
                t = vec_p_log_ratio(p, mid) + vec_p_log_ratio(q, mid);                             \
            }                                                                                      \
            for (int l = 0; l < TT_VEC_LANES && i + l < m; l++)                                    \
                acc[i + l] += t[l];                                                                \
        }                                                                                          \
    }

typedef void (*prob_terms_fn)(int64_t, const double *, const double *, const double *,
                              const double *, double *, int64_t);
PROB_TERMS(prob_terms_base, )
#ifdef TT_HAVE_AVX2_TARGET
PROB_TERMS(prob_terms_avx2, __attribute__((target("avx2"))))
#endif

/* One divergence term of log-probabilities a, b. */
static double log_term(int64_t kind, double a, double b)
{
    if (kind == TT_ERR_KL)
        return exp(a) * (a - b);
    const double m = log_add_exp(a, b) - LN2;
    return exp(a) * (a - m) + exp(b) * (b - m);
}

/* The divergences of probabilities over C-contiguous rows: a block of whole rows is read as one
 * flat run (float32 widened once), its row sums taken, spread over the block's elements, and
 * the same terms as the column walk's (prob_terms, the same operations) formed over the run
 * and summed row by row in column order: the same bits as the column walk, without its strided
 * loads of every column of every block twice. A block holds up to FLAT elements. */
#define FLAT 1024
#define FLAT_MAX_D 256 /* wider rows take the column walk (a block of 4 rows or more here) */
#define FLAT_MIN_D 8   /* and rows this short too: their per-row loops cost more (measured) */

/* Whether v ([N, d], FLAT_MIN_D <= d <= FLAT_MAX_D) is float32 / float64 with C-contiguous rows. */
static int flat_rows(const tt_view *v)
{
    const int64_t d = v->shape[1];
    return (v->dtype == TT_F32 || v->dtype == TT_F64) && d >= FLAT_MIN_D && d <= FLAT_MAX_D &&
           v->stride[1] == 1 && (v->shape[0] <= 1 || v->stride[0] == d);
}

/* Rows [start, start + m) of contiguous v as m * d doubles: in place (float64) or widened. */
static const double *flat_block(const tt_view *v, int64_t start, int64_t len, double *buf)
{
    const int64_t at = start * v->shape[1];
    if (v->dtype == TT_F64)
        return (const double *)(const void *)v->data + at;
    const float *f = (const float *)(const void *)v->data + at;
    for (int64_t i = 0; i < len; i++)
        buf[i] = (double)f[i];
    return buf;
}

/* tt_error_rows for the divergences of probabilities over flat_rows inputs. */
static double divergence_flat_rows(const tt_view *x, const tt_view *y, int64_t kind,
                                   prob_terms_fn prob_terms, double *values, double *acc)
{
    const int64_t n = x->shape[0], d = x->shape[1], block = FLAT / d;
    double xb[FLAT], yb[FLAT], tb[FLAT], sxb[FLAT], syb[FLAT]; /* 40 KiB */
    double total = 0.0;
    int negative = 0;
    for (int64_t start = 0; start < n; start += block) {
        const int64_t m = n - start < block ? n - start : block, len = m * d;
        const double *xs = flat_block(x, start, len, xb), *ys = flat_block(y, start, len, yb);
        for (int64_t j0 = 0; j0 < len; j0 += d) { /* each row: its sums, spread over it */
            const int64_t end = j0 + d < len ? j0 + d : len;
            double a = 0.0, b = 0.0;
            for (int64_t j = j0; j < end; j++) {
                a += xs[j];
                b += ys[j];
                negative |= (xs[j] < 0.0) | (ys[j] < 0.0);
            }
            for (int64_t j = j0; j < end; j++) {
                sxb[j] = a;
                syb[j] = b;
                tb[j] = 0.0;
            }
        }
        prob_terms(kind, xs, ys, sxb, syb, tb, len);
        for (int64_t r = 0; r < m; r++) {
            double v = 0.0;
            for (int64_t j = r * d; j < (r + 1) * d && j < len; j++)
                v += tb[j];
            v = kind == TT_ERR_JS ? 0.5 * v : v;
            total += v;
            if (values)
                values[start + r] = v;
        }
    }
    acc[0] = total;
    return negative ? NAN : total;
}

double tt_error_rows(const tt_view *x, const tt_view *y, int64_t kind, int log_prob, double *values,
                     double *acc)
{
    const int64_t n = x->shape[0], d = x->shape[1];
    double xb[ROWS], yb[ROWS], s0[ROWS], s1[ROWS], s2[ROWS];
    double summary = 0.0, total = 0.0;
    int negative = 0;
    prob_terms_fn prob_terms = prob_terms_base;
#ifdef TT_HAVE_AVX2_TARGET
    if (tt_simd_level() >= TT_SIMD_AVX2)
        prob_terms = prob_terms_avx2;
#endif
    if (kind != TT_ERR_COSINE && !log_prob && flat_rows(x) && flat_rows(y))
        return divergence_flat_rows(x, y, kind, prob_terms, values, acc);
    for (int64_t start = 0; start < n; start += ROWS) {
        const int64_t m = n - start < ROWS ? n - start : ROWS;
        for (int64_t i = 0; i < m; i++)
            s0[i] = s1[i] = s2[i] = 0.0;
        if (kind == TT_ERR_COSINE || !log_prob)
            for (int64_t j = 0; j < d; j++) { /* cosine: dot, |x|^2, |y|^2; else the row sums */
                (void)tt_load_scores(x, start, m, j, xb);
                (void)tt_load_scores(y, start, m, j, yb);
                for (int64_t i = 0; i < m; i++) {
                    if (kind == TT_ERR_COSINE) {
                        s0[i] += xb[i] * yb[i];
                        s1[i] += xb[i] * xb[i];
                        s2[i] += yb[i] * yb[i];
                    } else {
                        s1[i] += xb[i];
                        s2[i] += yb[i];
                        negative |= (xb[i] < 0.0) | (yb[i] < 0.0);
                    }
                }
            }
        if (kind != TT_ERR_COSINE)
            for (int64_t j = 0; j < d; j++) { /* the terms, summed per row into s0 */
                (void)tt_load_scores(x, start, m, j, xb);
                (void)tt_load_scores(y, start, m, j, yb);
                if (log_prob)
                    for (int64_t i = 0; i < m; i++)
                        s0[i] += log_term(kind, xb[i], yb[i]);
                else
                    prob_terms(kind, xb, yb, s1, s2, s0, m);
            }
        for (int64_t i = 0; i < m; i++) {
            double v = s0[i];
            if (kind == TT_ERR_COSINE) {
                const double norms = sqrt(s1[i]) * sqrt(s2[i]);
                v = s0[i] / norms;
                summary += norms;
            } else if (kind == TT_ERR_JS) {
                v = 0.5 * s0[i];
            }
            total += v;
            if (values)
                values[start + i] = v;
        }
    }
    acc[0] = total;
    if (kind == TT_ERR_COSINE)
        return summary;
    return negative ? NAN : total;
}
