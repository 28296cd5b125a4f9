/*
 * perplexity_rows.h: the log-sum-exp pieces of one contiguous row of logits (float32, bfloat16
 * or float16) a vector at a time, for kernels/perplexity.c. A row is read twice: once for its
 * maximum (and the check that no element is NaN or +inf: `x < inf` is false for both), once for
 * sum(exp(x - max)), each exponential formed in float (2 ulps) and summed in float64. The last
 * V mod W elements are copied into a vector padded with -inf (no effect on the maximum; those
 * lanes are masked out of the sum), so a short row (V ~ 100) has no scalar tail loop.
 *
 * Two kits of the same operations (gcc / clang vector extensions): k4, four lanes of 16 bytes,
 * the baseline build's (SSE2 on x86-64, NEON elsewhere), and k8, eight lanes, compiled for AVX2
 * with FMA where the CPU has them. gcc 12 lowers a vector wider than the target's registers
 * lane by lane, hence a kit per width rather than one eight-lane source.
 */
#ifndef TT_PERPLEXITY_ROWS_H
#define TT_PERPLEXITY_ROWS_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "kernels/simd.h"
#include "kernels/vec_math.h"

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"

/* exp(d) for d <= 0 or -inf, within 2 float ulps (1e-7 relative), on kit K: d clamped at -87
 * (exp(-87) ~ 2e-38 against a row sum of at least 1), d = k ln2 + r with |r| <= ln2 / 2 (k
 * rounded by the 1.5 * 2^23 shift, which also holds 127, the exponent bias, so that t's low bits
 * shifted into the exponent field are 2^k: k >= -126, a normal float), ln2 in two parts so that
 * k ln2 loses nothing, exp(r) by a degree-6 polynomial fitted for the least relative error on
 * [-ln2 / 2, ln2 / 2] (2e-9, below float's rounding). MULADD(a, b, c) = a b + c: one FMA in the
 * AVX2 copy, a rounded product and sum in the baseline one. */
#define TT_EXP_NONPOSITIVE(K, d, MULADD)                                                           \
    do {                                                                                           \
        const K##_f clamped = K##_max(d, K##_CONST(-87.0f));                                       \
        const K##_f t = MULADD(clamped, K##_CONST(1.44269504f), K##_CONST(12583039.0f));           \
        const K##_f k = t - 12583039.0f;                                                           \
        const K##_f r = MULADD(k, K##_CONST(-1.428606765330187e-06f),                              \
                               MULADD(k, K##_CONST(-0.693145751953125f), clamped));                \
        K##_f p = MULADD(r, K##_CONST(1.3836637e-3f), K##_CONST(8.374981e-3f));                    \
        p = MULADD(p, r, K##_CONST(4.1668236e-2f));                                                \
        p = MULADD(p, r, K##_CONST(0.16666418f));                                                  \
        p = MULADD(p, r, K##_CONST(0.4999999f));                                                   \
        p = MULADD(p, r, K##_CONST(1.0f));                                                         \
        p = MULADD(p, r, K##_CONST(1.0f));                                                         \
        (d) = p * (K##_f)((K##_u)t << 23);                                                         \
    } while (0)

/* W logits as floats from p (any alignment); bfloat16 widened by a shift, float16 as view.h's
 * tt_half_to_float does it (exponent and mantissa moved and rebiased, inf / NaN given the full
 * float exponent, subnormals renormalised by one subtraction), both exact. */
#define TT_LOADS(K, ATTRIBUTE)                                                                     \
    ATTRIBUTE TT_VEC_INLINE K##_f K##_load_f32(const float *p)                                     \
    {                                                                                              \
        K##_f v;                                                                                   \
        memcpy(&v, p, sizeof v);                                                                   \
        return v;                                                                                  \
    }                                                                                              \
    ATTRIBUTE TT_VEC_INLINE K##_u K##_widen(const uint16_t *p)                                     \
    {                                                                                              \
        K##_h h;                                                                                   \
        memcpy(&h, p, sizeof h);                                                                   \
        return __builtin_convertvector(h, K##_u);                                                  \
    }                                                                                              \
    ATTRIBUTE TT_VEC_INLINE K##_f K##_load_bf16(const uint16_t *p)                                 \
    {                                                                                              \
        return (K##_f)(K##_widen(p) << 16);                                                        \
    }                                                                                              \
    ATTRIBUTE TT_VEC_INLINE K##_f K##_load_f16(const uint16_t *p)                                  \
    {                                                                                              \
        const K##_u h = K##_widen(p);                                                              \
        const uint32_t exponent_mask = 0x7c00u << 13;                                              \
        K##_u bits = (h & 0x7fffu) << 13;                                                          \
        const K##_u exponent = bits & exponent_mask;                                               \
        const K##_u special = (K##_u)(exponent == exponent_mask);                                  \
        const K##_u subnormal = (K##_u)(exponent == 0);                                            \
        bits += ((uint32_t)(127 - 15) << 23) + (special & ((uint32_t)(128 - 16) << 23)) +          \
                (subnormal & ((uint32_t)1 << 23));                                                 \
        const K##_f f = (K##_f)bits - (K##_f)(subnormal & 0x38800000u); /* 2^-14 */                \
        return (K##_f)((K##_u)f | ((h & 0x8000u) << 16));                                          \
    }

/* ---- k4: four lanes, the baseline build ---------------------------------------------------- */

typedef float tt_k4_f __attribute__((vector_size(16)));
typedef int32_t tt_k4_i __attribute__((vector_size(16)));
typedef uint32_t tt_k4_u __attribute__((vector_size(16)));
typedef uint16_t tt_k4_h __attribute__((vector_size(8)));
typedef double tt_k4_acc __attribute__((vector_size(16))); /* two float64 sums */

#define tt_k4_LANES 4
#define tt_k4_CONST(c) ((tt_k4_f){c, c, c, c})
#define TT_K4_MULADD(a, b, c) ((a) * (b) + (c))

TT_VEC_INLINE tt_k4_f tt_k4_splat(float a) { return (tt_k4_f){a, a, a, a}; }
/* x86's max: b where a is not greater */
TT_VEC_INLINE tt_k4_f tt_k4_max(tt_k4_f a, tt_k4_f b)
{
    const tt_k4_i greater = a > b;
    return (tt_k4_f)(((tt_k4_i)a & greater) | ((tt_k4_i)b & ~greater));
}
TT_VEC_INLINE tt_k4_i tt_k4_below_inf(tt_k4_f a) { return a < INFINITY; }
TT_VEC_INLINE tt_k4_i tt_k4_lanes_below(int64_t live)
{
    return (tt_k4_i){0, 1, 2, 3} < (int32_t)live;
}
TT_VEC_INLINE tt_k4_f tt_k4_exp_nonpositive(tt_k4_f d)
{
    TT_EXP_NONPOSITIVE(tt_k4, d, TT_K4_MULADD);
    return d;
}
/* lo, hi += lanes 0-1 and 2-3 of e, widened to float64 (exactly) */
TT_VEC_INLINE void tt_k4_add_wide(tt_k4_acc *lo, tt_k4_acc *hi, tt_k4_f e)
{
    *lo += __builtin_convertvector(__builtin_shufflevector(e, e, 0, 1), tt_k4_acc);
    *hi += __builtin_convertvector(__builtin_shufflevector(e, e, 2, 3), tt_k4_acc);
}
TT_VEC_INLINE double tt_k4_acc_sum(tt_k4_acc a) { return a[0] + a[1]; }
TT_LOADS(tt_k4, )

/* ---- k8: eight lanes, AVX2 and FMA ---------------------------------------------------------- */

#ifdef TT_HAVE_AVX2_TARGET
#include <immintrin.h>

typedef float tt_k8_f __attribute__((vector_size(32)));
typedef int32_t tt_k8_i __attribute__((vector_size(32)));
typedef uint32_t tt_k8_u __attribute__((vector_size(32)));
typedef uint16_t tt_k8_h __attribute__((vector_size(16)));
typedef double tt_k8_acc __attribute__((vector_size(32))); /* four float64 sums */

#define TT_AVX2_FMA __attribute__((target("avx2,fma")))
#define tt_k8_LANES 8
/* a literal, not a splat of an argument: gcc 12 rebuilds the latter lane by lane in each loop */
#define tt_k8_CONST(c) ((tt_k8_f){c, c, c, c, c, c, c, c})
#define TT_K8_FMA(a, b, c) ((tt_k8_f)_mm256_fmadd_ps((__m256)(a), (__m256)(b), (__m256)(c)))

TT_AVX2_FMA TT_VEC_INLINE tt_k8_f tt_k8_splat(float a) { return (tt_k8_f)_mm256_set1_ps(a); }
TT_AVX2_FMA TT_VEC_INLINE tt_k8_f tt_k8_max(tt_k8_f a, tt_k8_f b)
{
    return (tt_k8_f)_mm256_max_ps((__m256)a, (__m256)b);
}
TT_AVX2_FMA TT_VEC_INLINE tt_k8_i tt_k8_below_inf(tt_k8_f a) { return a < INFINITY; }
TT_AVX2_FMA TT_VEC_INLINE tt_k8_i tt_k8_lanes_below(int64_t live)
{
    return (tt_k8_i){0, 1, 2, 3, 4, 5, 6, 7} < (int32_t)live;
}
TT_AVX2_FMA TT_VEC_INLINE tt_k8_f tt_k8_exp_nonpositive(tt_k8_f d)
{
    TT_EXP_NONPOSITIVE(tt_k8, d, TT_K8_FMA);
    return d;
}
/* lo, hi += lanes 0-3 and 4-7 of e, widened to float64 (gcc 12 would widen a vector extension's
 * halves two lanes at a time through the stack) */
TT_AVX2_FMA TT_VEC_INLINE void tt_k8_add_wide(tt_k8_acc *lo, tt_k8_acc *hi, tt_k8_f e)
{
    *lo += (tt_k8_acc)_mm256_cvtps_pd(_mm256_castps256_ps128((__m256)e));
    *hi += (tt_k8_acc)_mm256_cvtps_pd(_mm256_extractf128_ps((__m256)e, 1));
}
TT_AVX2_FMA TT_VEC_INLINE double tt_k8_acc_sum(tt_k8_acc a)
{
    return (a[0] + a[1]) + (a[2] + a[3]);
}
TT_LOADS(tt_k8, TT_AVX2_FMA)
#endif

/* A contiguous row of V elements of type T on kit K (LOAD: K's loader for T, PAD: T's -inf): its
 * maximum in *top_out and sum(exp(x - max)) in float64 in *sum_out. A row with a NaN or +inf goes
 * to STRIDED (the scalar function of the same signature), which names the element. Two vectors
 * per iteration, each with its own maximum and its own float64 sums, so that no iteration waits
 * on the last one's result. */
#define CONTIGUOUS_ROW(NAME, T, K, LOAD, PAD, STRIDED, ATTRIBUTE)                                  \
    ATTRIBUTE static int NAME(const char *p, int64_t step, int64_t v, double *top_out,             \
                              double *sum_out, int64_t *bad)                                       \
    {                                                                                              \
        enum { W = K##_LANES };                                                                    \
        const T *x = (const T *)p;                                                                 \
        const int64_t whole = v - v % W;                                                           \
        T pad[W];                                                                                  \
        for (int j = 0; j < W; j++)                                                                \
            pad[j] = whole + j < v ? x[whole + j] : (T)(PAD);                                      \
        const K##_f last = K##_##LOAD(pad);                                                        \
        K##_f top0 = last, top1 = last;                                                            \
        K##_i finite = K##_below_inf(last);                                                        \
        int64_t k = 0;                                                                             \
        for (; k + 2 * (int64_t)W <= whole; k += 2 * (int64_t)W) {                                 \
            const K##_f a = K##_##LOAD(x + k), b = K##_##LOAD(x + k + W);                          \
            finite &= K##_below_inf(a) & K##_below_inf(b);                                         \
            top0 = K##_max(a, top0);                                                               \
            top1 = K##_max(b, top1);                                                               \
        }                                                                                          \
        if (k < whole) {                                                                           \
            const K##_f a = K##_##LOAD(x + k);                                                     \
            finite &= K##_below_inf(a);                                                            \
            top0 = K##_max(a, top0);                                                               \
        }                                                                                          \
        top0 = K##_max(top1, top0);                                                                \
        float top = top0[0];                                                                       \
        int all_finite = finite[0];                                                                \
        for (int j = 1; j < W; j++) {                                                              \
            top = top0[j] > top ? top0[j] : top;                                                   \
            all_finite &= finite[j];                                                               \
        }                                                                                          \
        if (!all_finite)                                                                           \
            return STRIDED(p, step, v, top_out, sum_out, bad);                                     \
        if (top == -INFINITY) {                                                                    \
            *bad = -1;                                                                             \
            return 1;                                                                              \
        }                                                                                          \
        const K##_f shift = K##_splat(top);                                                        \
        K##_acc lo0 = {0}, hi0 = {0}, lo1 = {0}, hi1 = {0};                                        \
        for (k = 0; k + 2 * (int64_t)W <= whole; k += 2 * (int64_t)W) {                            \
            K##_add_wide(&lo0, &hi0, K##_exp_nonpositive(K##_##LOAD(x + k) - shift));              \
            K##_add_wide(&lo1, &hi1, K##_exp_nonpositive(K##_##LOAD(x + k + W) - shift));          \
        }                                                                                          \
        if (k < whole)                                                                             \
            K##_add_wide(&lo0, &hi0, K##_exp_nonpositive(K##_##LOAD(x + k) - shift));              \
        const K##_f tail = K##_exp_nonpositive(last - shift);                                      \
        K##_add_wide(&lo1, &hi1, (K##_f)((K##_i)tail & K##_lanes_below(v - whole)));               \
        *top_out = (double)top;                                                                    \
        *sum_out = K##_acc_sum((lo0 + hi0) + (lo1 + hi1));                                         \
        return 0;                                                                                  \
    }

#pragma GCC diagnostic pop

#endif /* TT_PERPLEXITY_ROWS_H */
