/*
 * ssim_moments.c: the windowed means of x, y, x^2, y^2 and x*y that SSIM needs, in one pass over
 * each plane instead of five 2-D convolutions. The window is separable (a Gaussian or a uniform
 * one is an outer product of two 1-D windows), so each padded row is filtered horizontally once
 * (5 * kw multiply-adds per output column), kept in a ring of the last kh rows, and every output
 * row is the vertical weighted sum of that ring (5 * kh per output): 5 (kh + kw) operations per
 * pixel against torch's 5 kh kw, and half the multiplications where the window is symmetric (it
 * is folded: w[t] (a[t] + a[k - 1 - t])). The workload: evaluation batches of [32, 3, 256, 256] and
 * larger; O(P H W (kh + kw)) time, O(kh Wo + W) memory.
 *
 * Rows are read through their strides with the reflection done by index (no padded copy), and
 * widened to double: the sums are float64 whatever the input dtype. The filter loops are plain
 * C that the compiler vectorises, compiled once more for AVX2 where the CPU has it (no FMA: the
 * build rounds every product, so both copies give the same bits).
 */
#include "kernels/ssim_moments.h"

#include <stdlib.h>

#include "kernels/simd.h"

#define STATS 5

/* Reflection without repeating the edge: -1 -> 1, n -> n - 2 (|i| < 2n - 1 is guaranteed by
 * pad < n). */
static inline int64_t reflect(int64_t i, int64_t n)
{
    if (i < 0)
        return -i;
    if (i >= n)
        return 2 * (n - 1) - i;
    return i;
}

/* row[j] for j in [0, Wp): the source row's sample at column reflect(j - pad), as double. */
static void load_row(double *row, const char *src, int64_t step, tt_dtype dtype, int64_t w,
                     int64_t pad)
{
    const int64_t wp = w + 2 * pad;
    if (dtype == TT_F32 && step == (int64_t)sizeof(float)) {
        const float *s = (const float *)src;
        for (int64_t j = 0; j < w; j++)
            row[pad + j] = (double)s[j];
    } else if (dtype == TT_F64 && step == (int64_t)sizeof(double)) {
        memcpy(row + pad, src, (size_t)w * sizeof(double));
    } else {
        for (int64_t j = 0; j < w; j++)
            row[pad + j] = tt_load_score(src + j * step, dtype);
    }
    for (int64_t j = 0; j < pad; j++) {
        row[j] = row[pad + reflect(j - pad, w)];
        row[wp - 1 - j] = row[pad + reflect(w - 1 + pad - j, w)];
    }
}

/* The two filters, as a body compiled twice (baseline and AVX2). A symmetric window (both the
 * Gaussian and the uniform one are) of odd length k is folded: w[t] (a[t] + a[k - 1 - t]), half
 * the multiplications. */
#define FILTERS(SUFFIX, ATTR)                                                                      \
    ATTR static void horizontal##SUFFIX(double *restrict dst, const double *restrict src,          \
                                        const double *restrict w, int64_t k, int symmetric,        \
                                        int64_t wo)                                                \
    {                                                                                              \
        if (symmetric) {                                                                           \
            const int64_t m = k / 2;                                                               \
            const double wm = w[m];                                                                \
            for (int64_t j = 0; j < wo; j++)                                                       \
                dst[j] = wm * src[j + m];                                                          \
            for (int64_t t = 0; t < m; t++) {                                                      \
                const double wt = w[t];                                                            \
                const double *restrict a = src + t, *restrict b = src + k - 1 - t;                 \
                for (int64_t j = 0; j < wo; j++)                                                   \
                    dst[j] += wt * (a[j] + b[j]);                                                  \
            }                                                                                      \
            return;                                                                                \
        }                                                                                          \
        for (int64_t j = 0; j < wo; j++)                                                           \
            dst[j] = w[0] * src[j];                                                                \
        for (int64_t t = 1; t < k; t++) {                                                          \
            const double wt = w[t];                                                                \
            const double *restrict s = src + t;                                                    \
            for (int64_t j = 0; j < wo; j++)                                                       \
                dst[j] += wt * s[j];                                                               \
        }                                                                                          \
    }                                                                                              \
    ATTR static void /* NOLINT(bugprone-macro-parentheses) */ vertical##SUFFIX(                    \
        double *restrict dst, const double *restrict ring, const double *restrict w, int64_t k,    \
        int symmetric, int64_t first, int64_t wo)                                                  \
    {                                                                                              \
        if (symmetric) {                                                                           \
            const int64_t m = k / 2;                                                               \
            const double wm = w[m];                                                                \
            const double *restrict rm = ring + ((first + m) % k) * wo;                             \
            for (int64_t j = 0; j < wo; j++)                                                       \
                dst[j] = wm * rm[j];                                                               \
            for (int64_t t = 0; t < m; t++) {                                                      \
                const double wt = w[t];                                                            \
                const double *restrict a = ring + ((first + t) % k) * wo;                          \
                const double *restrict b = ring + ((first + k - 1 - t) % k) * wo;                  \
                for (int64_t j = 0; j < wo; j++)                                                   \
                    dst[j] += wt * (a[j] + b[j]);                                                  \
            }                                                                                      \
            return;                                                                                \
        }                                                                                          \
        const double *restrict r0 = ring + first * wo;                                             \
        for (int64_t j = 0; j < wo; j++)                                                           \
            dst[j] = w[0] * r0[j];                                                                 \
        for (int64_t t = 1; t < k; t++) {                                                          \
            const double wt = w[t];                                                                \
            const double *restrict r = ring + ((first + t) % k) * wo;                              \
            for (int64_t j = 0; j < wo; j++)                                                       \
                dst[j] += wt * r[j];                                                               \
        }                                                                                          \
    }

FILTERS(_base, )
#ifdef TT_HAVE_AVX2_TARGET
FILTERS(_avx2, __attribute__((target("avx2"))))
#endif

typedef void (*horizontal_fn)(double *, const double *, const double *, int64_t, int, int64_t);
typedef void (*vertical_fn)(double *, const double *, const double *, int64_t, int, int64_t,
                            int64_t);

/* Whether the window reads the same backwards, with an odd length (it can then be folded). */
static int is_symmetric(const double *w, int64_t k)
{
    if (k % 2 == 0)
        return 0;
    for (int64_t t = 0; t < k / 2; t++)
        if (w[t] != w[k - 1 - t])
            return 0;
    return 1;
}

static tt_status check_window(const tt_view *w, const char *arg, tt_error *err)
{
    char got[96];
    if (w->dtype != TT_F64)
        return tt_fail(err, TT_ETYPE, arg, "expected float64 window weights [k] (k >= 1), got %s",
                       tt_describe(w, got, sizeof got));
    if (w->ndim != 1 || w->shape[0] < 1)
        return tt_fail(err, TT_EVALUE, arg, "expected float64 window weights [k] (k >= 1), got %s",
                       tt_describe(w, got, sizeof got));
    return tt_check_cpu(w, arg, err);
}

static tt_status check_pad(int64_t pad, int64_t size, const char *arg, tt_error *err)
{
    if (pad < 0 || (pad > 0 && pad >= size))
        return tt_fail(err, TT_EVALUE, arg,
                       "expected an int in [0, %lld] (reflect padding), got %lld",
                       (long long)(size > 1 ? size - 1 : 0), (long long)pad);
    return TT_OK;
}

static tt_status check_all(const tt_view *out, const tt_view *x, const tt_view *y,
                           const tt_view *wh, const tt_view *ww, int64_t pad_h, int64_t pad_w,
                           tt_error *err)
{
    char got[96], want[96];
    tt_status st = tt_check_scores(x, "x", 3, err);
    if (st == TT_OK)
        st = tt_check_cpu(x, "x", err);
    if (st != TT_OK)
        return st;
    if (y->dtype != x->dtype || y->ndim != 3 || y->shape[0] != x->shape[0] ||
        y->shape[1] != x->shape[1] || y->shape[2] != x->shape[2])
        return tt_fail(err, TT_EVALUE, "y", "expected the dtype and shape of x (%s), got %s",
                       tt_describe(x, want, sizeof want), tt_describe(y, got, sizeof got));
    const int64_t h = x->shape[1], w = x->shape[2];
    st = tt_check_cpu(y, "y", err);
    if (st == TT_OK)
        st = check_window(wh, "wh", err);
    if (st == TT_OK)
        st = check_window(ww, "ww", err);
    if (st == TT_OK)
        st = check_pad(pad_h, h, "pad_h", err);
    if (st == TT_OK)
        st = check_pad(pad_w, w, "pad_w", err);
    if (st != TT_OK)
        return st;
    const int64_t ho = h + 2 * pad_h - wh->shape[0] + 1, wo = w + 2 * pad_w - ww->shape[0] + 1;
    if (ho < 1 || wo < 1)
        return tt_fail(err, TT_EVALUE, "wh, ww",
                       "expected a window of at most %lld x %lld (the padded plane), got %lld x "
                       "%lld",
                       (long long)(h + 2 * pad_h), (long long)(w + 2 * pad_w),
                       (long long)wh->shape[0], (long long)ww->shape[0]);
    const int64_t shape[4] = {STATS, x->shape[0], ho, wo};
    return tt_check_out(out, "out", TT_F64, 4, shape, err);
}

/* Contiguous copy of a (possibly strided) float64 window. */
static void copy_window(double *dst, const tt_view *w)
{
    for (int64_t t = 0; t < w->shape[0]; t++)
        dst[t] = tt_f64_at(w->data + t * tt_step(w, 0));
}

tt_status tt_ssim_moments(const tt_view *out, const tt_view *x, const tt_view *y, const tt_view *wh,
                          const tt_view *ww, int64_t pad_h, int64_t pad_w, tt_error *err)
{
    tt_status st = check_all(out, x, y, wh, ww, pad_h, pad_w, err);
    if (st != TT_OK)
        return st;
    const int64_t planes = x->shape[0], h = x->shape[1], w = x->shape[2];
    const int64_t kh = wh->shape[0], kw = ww->shape[0];
    const int64_t ho = h + 2 * pad_h - kh + 1, wo = w + 2 * pad_w - kw + 1;
    const int64_t wp = w + 2 * pad_w, hp = h + 2 * pad_h;
    if (planes == 0)
        return TT_OK;
    /* rows: 5 padded rows (x, y, xx, yy, xy) of wp; ring: 5 x kh filtered rows of wo; windows */
    const size_t doubles = (size_t)(STATS * wp + STATS * kh * wo + kh + kw);
    double *buf = malloc(doubles * sizeof(double));
    if (!buf)
        return tt_fail(err, TT_ENOMEM, "out", "cannot allocate %zu bytes of work space",
                       doubles * sizeof(double));
    double *rows = buf, *ring = rows + STATS * wp, *vw = ring + STATS * kh * wo, *hw = vw + kh;
    copy_window(vw, wh);
    copy_window(hw, ww);
    const int sym_h = is_symmetric(vw, kh), sym_w = is_symmetric(hw, kw);
    horizontal_fn horizontal = horizontal_base;
    vertical_fn vertical = vertical_base;
#ifdef TT_HAVE_AVX2_TARGET
    if (tt_simd_level() >= TT_SIMD_AVX2) {
        horizontal = horizontal_avx2;
        vertical = vertical_avx2;
    }
#endif
    const int64_t xs0 = tt_step(x, 0), xs1 = tt_step(x, 1), xs2 = tt_step(x, 2);
    const int64_t ys0 = tt_step(y, 0), ys1 = tt_step(y, 1), ys2 = tt_step(y, 2);
    const int64_t plane_out = ho * wo, stat_out = planes * plane_out;
    double *dst = (double *)out->data;
    for (int64_t p = 0; p < planes; p++) {
        for (int64_t r = 0; r < hp; r++) {
            const int64_t src = reflect(r - pad_h, h);
            double *xr = rows, *yr = rows + wp, *xx = rows + 2 * wp, *yy = rows + 3 * wp,
                   *xy = rows + 4 * wp;
            load_row(xr, x->data + p * xs0 + src * xs1, xs2, x->dtype, w, pad_w);
            load_row(yr, y->data + p * ys0 + src * ys1, ys2, y->dtype, w, pad_w);
            for (int64_t j = 0; j < wp; j++) {
                xx[j] = xr[j] * xr[j];
                yy[j] = yr[j] * yr[j];
                xy[j] = xr[j] * yr[j];
            }
            const int64_t slot = r % kh;
            for (int s = 0; s < STATS; s++)
                horizontal(ring + (s * kh + slot) * wo, rows + s * wp, hw, kw, sym_w, wo);
            if (r >= kh - 1) {
                const int64_t i = r - kh + 1; /* the output row whose window ends at r */
                for (int s = 0; s < STATS; s++)
                    vertical(dst + s * stat_out + p * plane_out + i * wo, ring + s * kh * wo, vw,
                             kh, sym_h, i % kh, wo);
            }
        }
    }
    free(buf);
    return TT_OK;
}
