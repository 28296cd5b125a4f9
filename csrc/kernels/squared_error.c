/*
 * squared_error.c: sum (x - y)^2 in float64 and the range of y, one pass over both tensors with
 * no float64 copy of them. torch would widen both inputs to float64, subtract, square and sum:
 * five full-size passes and three full-size allocations, several times slower than the float32
 * sum torchmetrics does. Here the inputs are read in chunks of TT_CHUNK samples (contiguous
 * float32 in place, anything else widened to double in a buffer that stays in L1), clamped,
 * subtracted, squared and summed, and the range of y kept, in one loop of four lanes the
 * compiler vectorises; each chunk's sum is added to the total (a two-level sum: the rounding
 * error grows with the number of chunks, not of samples). The loop is compiled a second time
 * for AVX2 where the CPU has it (no FMA: both copies give the same bits).
 */
#include "kernels/squared_error.h"

#include <math.h>

#include "kernels/simd.h"

#define LANES 4

/* One sample: x and y clamped to [lo, hi], the range of y widened by y, (x - y)^2 returned. The
 * comparisons are those x86's min/max instructions make, so the AVX2 loop below agrees. */
static inline double clamped_square(double a, double b, double lo, double hi, double *least,
                                    double *most)
{
    a = a < lo ? lo : (a > hi ? hi : a);
    b = b < lo ? lo : (b > hi ? hi : b);
    *least = b < *least ? b : *least;
    *most = b > *most ? b : *most;
    return (a - b) * (a - b);
}

/* The fused loop over one chunk, for double buffers and for float32 read in place: values
 * clamped to [lo, hi] (infinite bounds when none are given: the clamp is then the identity),
 * (x - y)^2 summed and the min and max of y kept, in LANES lanes (lane l takes the samples
 * i = l mod LANES; the last n % LANES samples go to lane 0). A NaN y is skipped by min/max here;
 * the caller finds it through the sum. */
#define FUSED(NAME, T)                                                                             \
    static double NAME(const T *restrict x, const T *restrict y, int64_t n, double lo, double hi,  \
                       double *restrict least, double *restrict most)                              \
    {                                                                                              \
        double sum[LANES] = {0.0, 0.0, 0.0, 0.0};                                                  \
        int64_t i = 0;                                                                             \
        for (; i + LANES <= n; i += LANES)                                                         \
            for (int l = 0; l < LANES; l++)                                                        \
                sum[l] += clamped_square(x[i + l], y[i + l], lo, hi, least + l, most + l);         \
        for (; i < n; i++)                                                                         \
            sum[0] += clamped_square(x[i], y[i], lo, hi, least, most);                             \
        return (sum[0] + sum[1]) + (sum[2] + sum[3]);                                              \
    }

FUSED(fused_f64_base, double)
FUSED(fused_f32_base, float)

#ifdef TT_HAVE_AVX2_TARGET
#include <immintrin.h>

/* The same loop in AVX2 intrinsics (gcc does not vectorise the lanes above): vector lane l is
 * lane l there, and max/min_pd(a, b) is `a > b ? a : b` / `a < b ? a : b`, so both copies give
 * the same bits. LOAD4 reads four values of x or y as doubles. */
#define FUSED_AVX2(NAME, T, LOAD4)                                                                 \
    __attribute__((target("avx2"))) static double NAME(                                            \
        const T *restrict x, const T *restrict y, int64_t n, double lo, double hi,                 \
        double *restrict least, double *restrict most)                                             \
    {                                                                                              \
        const __m256d vlo = _mm256_set1_pd(lo), vhi = _mm256_set1_pd(hi);                          \
        __m256d sum = _mm256_setzero_pd(), mn = _mm256_loadu_pd(least),                            \
                mx = _mm256_loadu_pd(most);                                                        \
        int64_t i = 0;                                                                             \
        for (; i + LANES <= n; i += LANES) {                                                       \
            const __m256d a = _mm256_min_pd(vhi, _mm256_max_pd(vlo, LOAD4(x + i)));                \
            const __m256d b = _mm256_min_pd(vhi, _mm256_max_pd(vlo, LOAD4(y + i)));                \
            const __m256d d = _mm256_sub_pd(a, b);                                                 \
            sum = _mm256_add_pd(sum, _mm256_mul_pd(d, d));                                         \
            mn = _mm256_min_pd(b, mn);                                                             \
            mx = _mm256_max_pd(b, mx);                                                             \
        }                                                                                          \
        double lane[LANES];                                                                        \
        _mm256_storeu_pd(lane, sum);                                                               \
        _mm256_storeu_pd(least, mn);                                                               \
        _mm256_storeu_pd(most, mx);                                                                \
        for (; i < n; i++)                                                                         \
            lane[0] += clamped_square(x[i], y[i], lo, hi, least, most);                            \
        return (lane[0] + lane[1]) + (lane[2] + lane[3]);                                          \
    }

#define LOAD_F64(p) _mm256_loadu_pd(p)
#define LOAD_F32(p) _mm256_cvtps_pd(_mm_loadu_ps(p))
FUSED_AVX2(fused_f64_avx2, double, LOAD_F64)
FUSED_AVX2(fused_f32_avx2, float, LOAD_F32)
#endif

typedef double (*fused_f64_fn)(const double *, const double *, int64_t, double, double, double *,
                               double *);
typedef double (*fused_f32_fn)(const float *, const float *, int64_t, double, double, double *,
                               double *);

/* Whether y holds a NaN (the rare path taken once the sum has turned NaN). */
static int has_nan(const tt_view *y)
{
    const int64_t n = y->shape[0], step = tt_step(y, 0);
    for (int64_t i = 0; i < n; i++) {
        const double v = tt_load_score(y->data + i * step, y->dtype);
        if (v != v)
            return 1;
    }
    return 0;
}

static tt_status check_all(const tt_view *out, const tt_view *x, const tt_view *y,
                           const tt_view *bounds, tt_error *err)
{
    char got[96], want[96];
    static const int64_t three[1] = {3};
    tt_status st = tt_check_out(out, "out", TT_F64, 1, three, err);
    if (st == TT_OK)
        st = tt_check_scores(x, "x", 1, err);
    if (st == TT_OK)
        st = tt_check_cpu(x, "x", err);
    if (st != TT_OK)
        return st;
    if (y->ndim != 1 || y->dtype != x->dtype || y->shape[0] != x->shape[0])
        return tt_fail(err, TT_EVALUE, "y", "expected the dtype and shape of x (%s), got %s",
                       tt_describe(x, want, sizeof want), tt_describe(y, got, sizeof got));
    st = tt_check_cpu(y, "y", err);
    if (st != TT_OK || !bounds)
        return st;
    st = tt_check_cpu(bounds, "bounds", err);
    if (st != TT_OK)
        return st;
    if (bounds->dtype != TT_F64 || bounds->ndim != 1 || bounds->shape[0] != 2)
        return tt_fail(err, bounds->dtype != TT_F64 ? TT_ETYPE : TT_EVALUE, "bounds",
                       "expected float64 [2] (lo, hi), got %s",
                       tt_describe(bounds, got, sizeof got));
    const char *b = bounds->data;
    const double lo = tt_f64_at(b), hi = tt_f64_at(b + tt_step(bounds, 0));
    if (!(lo <= hi))
        return tt_fail(err, TT_EVALUE, "bounds", "expected lo <= hi, got (%g, %g)", lo, hi);
    return TT_OK;
}

tt_status tt_squared_error(const tt_view *out, const tt_view *x, const tt_view *y,
                           const tt_view *bounds, tt_error *err)
{
    tt_status st = check_all(out, x, y, bounds, err);
    if (st != TT_OK)
        return st;
    fused_f64_fn fused_f64 = fused_f64_base;
    fused_f32_fn fused_f32 = fused_f32_base;
#ifdef TT_HAVE_AVX2_TARGET
    if (tt_simd_level() >= TT_SIMD_AVX2) {
        fused_f64 = fused_f64_avx2;
        fused_f32 = fused_f32_avx2;
    }
#endif
    double lo = -INFINITY, hi = INFINITY;
    if (bounds) {
        lo = tt_f64_at(bounds->data);
        hi = tt_f64_at(bounds->data + tt_step(bounds, 0));
    }
    const int64_t n = x->shape[0], xs = tt_step(x, 0), ys = tt_step(y, 0);
    const int in_place = x->dtype == TT_F32 && xs == (int64_t)sizeof(float) && ys == xs;
    double xb[TT_CHUNK], yb[TT_CHUNK];
    double least[LANES], most[LANES];
    for (int l = 0; l < LANES; l++) {
        least[l] = INFINITY;
        most[l] = -INFINITY;
    }
    double total = 0.0;
    for (int64_t start = 0; start < n; start += TT_CHUNK) {
        const int64_t m = n - start < TT_CHUNK ? n - start : TT_CHUNK;
        if (in_place) {
            total += fused_f32((const float *)x->data + start, (const float *)y->data + start, m,
                               lo, hi, least, most);
        } else {
            (void)tt_load_scores(x, start, m, 0, xb); /* (NaN is found through the sum) */
            (void)tt_load_scores(y, start, m, 0, yb);
            total += fused_f64(xb, yb, m, lo, hi, least, most);
        }
    }
    double low = least[0], high = most[0];
    for (int l = 1; l < LANES; l++) {
        low = least[l] < low ? least[l] : low;
        high = most[l] > high ? most[l] : high;
    }
    const int nan_in_y = total != total && has_nan(y);
    double *dst = (double *)out->data; /* contiguous (checked) */
    dst[0] = total;
    dst[1] = nan_in_y ? NAN : low;
    dst[2] = nan_in_y ? NAN : high;
    return TT_OK;
}
