/*
 * vec_math.h: float64 log, log1p and expm1 on four lanes at once (gcc / clang vector extensions),
 * for the regression kernels' large batches, where a scalar libm call per element (10-20 ns)
 * costs more than the rest of the pass. Only IEEE add, subtract, multiply, divide and integer bit
 * operations, no FMA (the build has -ffp-contract=off): a lane's result is the same bits whether
 * the caller is compiled for SSE2 or AVX2, and whatever lane the value sits in.
 *
 * Accuracy (tests/csrc/test_vec_math.py checks it against libm on random and edge inputs): log
 * within 1 ulp (the classic reduction to m in [sqrt(2)/2, sqrt(2)) and a degree-14 odd minimax
 * series in s = f / (2 + f)); log1p within 2 ulp (log of u = 1 + x plus the rounding of u,
 * (x - (u - 1)) / u); expm1 of a >= 0 within 2 ulp (a = k ln2 + r, |r| <= ln2 / 2, Taylor to
 * r^14). Special values follow libm: log(0) = -inf, log(< 0) = NaN, log(inf) = inf, NaN stays.
 */
#ifndef TT_VEC_MATH_H
#define TT_VEC_MATH_H

#include <stdint.h>
#include <string.h>

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"

typedef double tt_v4d __attribute__((vector_size(32)));
typedef int64_t tt_v4i __attribute__((vector_size(32)));

/* Inlined into each caller, so that an AVX2 caller gets AVX2 code. */
#define TT_VEC_INLINE static inline __attribute__((always_inline))

#define TT_VEC_LANES 4

typedef float tt_v4f __attribute__((vector_size(16)));

TT_VEC_INLINE tt_v4d tt_vec_splat(double a) { return (tt_v4d){a, a, a, a}; }

/* Four consecutive values from p (any alignment), widened to float64. */
TT_VEC_INLINE tt_v4d tt_vec_load_f64(const double *p)
{
    tt_v4d v;
    memcpy(&v, p, sizeof v);
    return v;
}
TT_VEC_INLINE tt_v4d tt_vec_load_f32(const float *p)
{
    tt_v4f v;
    memcpy(&v, p, sizeof v);
    return __builtin_convertvector(v, tt_v4d);
}
#define tt_vec_load(p)                                                                             \
    _Generic((p), const float *: tt_vec_load_f32, const double *: tt_vec_load_f64)(p)

/* mask ? a : b per lane (mask lanes all ones or all zeros, as a comparison gives). */
TT_VEC_INLINE tt_v4d tt_vec_select(tt_v4i mask, tt_v4d a, tt_v4d b)
{
    return (tt_v4d)(((tt_v4i)a & mask) | ((tt_v4i)b & ~mask));
}

/* 1.5 * 2^52: adding it rounds a double below 2^51 in magnitude to an integer held in the low
 * bits, and subtracting its bits from the sum's bits gives that integer as int64. */
#define TT_VEC_ROUNDER 6755399441055744.0
#define TT_VEC_ROUNDER_BITS 0x4338000000000000LL

/* log(2) split: the high part has 21 trailing zero bits, so k * LN2_HI is exact for |k| < 2^21. */
#define TT_VEC_LN2_HI 6.93147180369123816490e-01
#define TT_VEC_LN2_LO 1.90821492927058770002e-10

TT_VEC_INLINE tt_v4d tt_vec_log(tt_v4d x)
{
    /* subnormals scaled into the normal range first (zero and negatives too: fixed below) */
    const tt_v4i tiny = x < 0x1p-1022;
    const tt_v4d xs = tt_vec_select(tiny, x * 0x1p52, x);
    /* x = 2^k m with m in [sqrt(2)/2, sqrt(2)): the exponent taken relative to sqrt(2)/2 */
    const tt_v4i shifted = (tt_v4i)xs - 0x3fe6a09e667f3bcdLL;
    const tt_v4i k = (shifted >> 52) - (tiny & 52);
    const tt_v4d m = (tt_v4d)((shifted & 0x000fffffffffffffLL) + 0x3fe6a09e667f3bcdLL);
    const tt_v4d kd = (tt_v4d)(k + TT_VEC_ROUNDER_BITS) - TT_VEC_ROUNDER;
    /* log(1 + f) = f - (f^2 / 2 - s (f^2 / 2 + R(s^2))), s = f / (2 + f) */
    const tt_v4d f = m - 1.0, s = f / (2.0 + f), z = s * s, w = z * z;
    const tt_v4d even = w * (3.999999999940941908e-01 +
                             w * (2.222219843214978396e-01 + w * 1.531383769920937332e-01));
    const tt_v4d odd = z * (6.666666666666735130e-01 +
                            w * (2.857142874366239149e-01 +
                                 w * (1.818357216161805012e-01 + w * 1.479819860511658591e-01)));
    const tt_v4d half_f2 = 0.5 * f * f;
    tt_v4d r =
        kd * TT_VEC_LN2_HI - ((half_f2 - (s * (half_f2 + (odd + even)) + kd * TT_VEC_LN2_LO)) - f);
    const tt_v4d inf = tt_vec_splat(__builtin_inf());
    r = tt_vec_select(x == inf, inf, r);
    r = tt_vec_select(x == 0.0, -inf, r);
    return tt_vec_select(~(x >= 0.0), tt_vec_splat(__builtin_nan("")), r);
}

/* log(1 + x): the log of u = 1 + x, corrected by u's rounding error (x - (u - 1)) / u. */
TT_VEC_INLINE tt_v4d tt_vec_log1p(tt_v4d x)
{
    const tt_v4d u = 1.0 + x;
    const tt_v4i regular = (u > 0.0) & (u < __builtin_inf());
    const tt_v4d c = tt_vec_select(regular, (x - (u - 1.0)) / u, tt_vec_splat(0.0));
    return tt_vec_log(u) + c;
}

/* e^a - 1 for a in [0, 40] (NaN stays NaN): 2^k (expm1(r) + 1) - 1 with a = k ln2 + r. */
TT_VEC_INLINE tt_v4d tt_vec_expm1_nonneg(tt_v4d a)
{
    const tt_v4d rounded = a * 1.44269504088896338700e+00 + TT_VEC_ROUNDER;
    const tt_v4i k = (tt_v4i)rounded - TT_VEC_ROUNDER_BITS;
    const tt_v4d kd = rounded - TT_VEC_ROUNDER;
    const tt_v4d r = (a - kd * TT_VEC_LN2_HI) - kd * TT_VEC_LN2_LO;
    /* r (1 + r / 2 (1 + r / 3 (1 + ...))) to r^14 */
    tt_v4d p = 1.0 + r * (1.0 / 14.0);
    p = 1.0 + (r * (1.0 / 13.0)) * p;
    p = 1.0 + (r * (1.0 / 12.0)) * p;
    p = 1.0 + (r * (1.0 / 11.0)) * p;
    p = 1.0 + (r * (1.0 / 10.0)) * p;
    p = 1.0 + (r * (1.0 / 9.0)) * p;
    p = 1.0 + (r * (1.0 / 8.0)) * p;
    p = 1.0 + (r * (1.0 / 7.0)) * p;
    p = 1.0 + (r * (1.0 / 6.0)) * p;
    p = 1.0 + (r * (1.0 / 5.0)) * p;
    p = 1.0 + (r * (1.0 / 4.0)) * p;
    p = 1.0 + (r * (1.0 / 3.0)) * p;
    p = 1.0 + (r * 0.5) * p;
    const tt_v4d em1 = r * p;
    const tt_v4d scale = (tt_v4d)((k + 1023) << 52); /* 2^k, k in [0, 58] */
    const tt_v4d e = scale * em1 + (scale - 1.0);
    return tt_vec_select(a == a, e, a);
}

#pragma GCC diagnostic pop

#endif /* TT_VEC_MATH_H */
