/*
 * perplexity_rows.h: the log-sum-exp pieces of one row of logits a vector at a time, for
 * kernels/perplexity.c. A row is read twice: once for its maximum (and the check that no element
 * is NaN or +inf: `x < inf` is false for both), once for sum(exp(x - max)), each exponential
 * formed in the kit's precision (float within 2 ulps; double for float64 logits) and summed in
 * float64. The last V mod W elements come in one vector load that overlaps the loop's last one,
 * so a short row (V ~ 100) has no scalar tail loop. A strided row is gathered into a float32
 * buffer a block at a time.
 *
 * Kits of the same operations (gcc / clang vector extensions): k4, four float lanes of 16 bytes,
 * the baseline build's (SSE2 on x86-64, NEON elsewhere); k8, eight float lanes, and d4, four
 * double lanes, compiled for AVX2 with FMA and F16C where the CPU has them. gcc 12 lowers a vector
 * wider than the target's registers lane by lane, hence a kit per width rather than one source.
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

/* ---- k4: four lanes, the baseline build ---------------------------------------------------- */

typedef float tt_k4_f __attribute__((vector_size(16)));
typedef int32_t tt_k4_i __attribute__((vector_size(16)));
typedef uint32_t tt_k4_u __attribute__((vector_size(16)));
typedef uint16_t tt_k4_h __attribute__((vector_size(8)));
typedef double tt_k4_acc __attribute__((vector_size(16))); /* two float64 sums */
typedef float tt_k4_s;

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
/* Four logits as floats from p (any alignment), exactly: bfloat16 widened by a shift; float16 as
 * view.h's tt_half_to_float does it (exponent and mantissa moved and rebiased, inf / NaN given
 * the full float exponent, subnormals renormalised by one subtraction). */
TT_VEC_INLINE tt_k4_f tt_k4_load_f32(const float *p)
{
    tt_k4_f v;
    memcpy(&v, p, sizeof v);
    return v;
}
TT_VEC_INLINE tt_k4_u tt_k4_widen(const uint16_t *p)
{
    tt_k4_h h;
    memcpy(&h, p, sizeof h);
    return __builtin_convertvector(h, tt_k4_u);
}
TT_VEC_INLINE tt_k4_f tt_k4_load_bf16(const uint16_t *p) { return (tt_k4_f)(tt_k4_widen(p) << 16); }
TT_VEC_INLINE tt_k4_f tt_k4_load_f16(const uint16_t *p)
{
    const tt_k4_u h = tt_k4_widen(p);
    const uint32_t exponent_mask = 0x7c00u << 13;
    tt_k4_u bits = (h & 0x7fffu) << 13;
    const tt_k4_u exponent = bits & exponent_mask;
    const tt_k4_u special = (tt_k4_u)(exponent == exponent_mask);
    const tt_k4_u subnormal = (tt_k4_u)(exponent == 0);
    bits += ((uint32_t)(127 - 15) << 23) + (special & ((uint32_t)(128 - 16) << 23)) +
            (subnormal & ((uint32_t)1 << 23));
    const tt_k4_f f = (tt_k4_f)bits - (tt_k4_f)(subnormal & 0x38800000u); /* 2^-14 */
    return (tt_k4_f)((tt_k4_u)f | ((h & 0x8000u) << 16));
}

/* ---- k8: eight lanes, AVX2, FMA and F16C ------------------------------------------------ */

#ifdef TT_HAVE_AVX2_TARGET
#include <immintrin.h>

typedef float tt_k8_f __attribute__((vector_size(32)));
typedef int32_t tt_k8_i __attribute__((vector_size(32)));
typedef uint32_t tt_k8_u __attribute__((vector_size(32)));
typedef double tt_k8_acc __attribute__((vector_size(32))); /* four float64 sums */
typedef float tt_k8_s;

#define TT_AVX2_FMA __attribute__((target("avx2,fma,f16c")))
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
TT_AVX2_FMA TT_VEC_INLINE tt_k8_f tt_k8_load_f32(const float *p)
{
    tt_k8_f v;
    memcpy(&v, p, sizeof v);
    return v;
}
/* eight logits as floats (any alignment): the widening instructions named, as gcc 12 widens
 * eight uint16 lane by lane; float16 by F16C's */
TT_AVX2_FMA TT_VEC_INLINE tt_k8_f tt_k8_load_bf16(const uint16_t *p)
{
    const __m128i h = _mm_loadu_si128((const __m128i *)(const void *)p);
    return (tt_k8_f)_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16);
}
TT_AVX2_FMA TT_VEC_INLINE tt_k8_f tt_k8_load_f16(const uint16_t *p)
{
    return (tt_k8_f)_mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(const void *)p));
}

/* ---- d4: four float64 lanes, AVX2 and FMA (float64 logits) ----------------------------------- */

typedef double tt_d4_f __attribute__((vector_size(32)));
typedef int64_t tt_d4_i __attribute__((vector_size(32)));
typedef uint64_t tt_d4_u __attribute__((vector_size(32)));
typedef tt_d4_f tt_d4_acc;
typedef double tt_d4_s;

#define tt_d4_LANES 4
#define tt_d4_CONST(c) ((tt_d4_f){c, c, c, c})
#define TT_D4_FMA(a, b, c) ((tt_d4_f)_mm256_fmadd_pd((__m256d)(a), (__m256d)(b), (__m256d)(c)))

TT_AVX2_FMA TT_VEC_INLINE tt_d4_f tt_d4_splat(double a) { return (tt_d4_f)_mm256_set1_pd(a); }
TT_AVX2_FMA TT_VEC_INLINE tt_d4_f tt_d4_load_f64(const double *p)
{
    tt_d4_f v;
    memcpy(&v, p, sizeof v);
    return v;
}
TT_AVX2_FMA TT_VEC_INLINE tt_d4_f tt_d4_max(tt_d4_f a, tt_d4_f b)
{
    return (tt_d4_f)_mm256_max_pd((__m256d)a, (__m256d)b);
}
TT_AVX2_FMA TT_VEC_INLINE tt_d4_i tt_d4_below_inf(tt_d4_f a) { return a < INFINITY; }
TT_AVX2_FMA TT_VEC_INLINE tt_d4_i tt_d4_lanes_below(int64_t live)
{
    return (tt_d4_i){0, 1, 2, 3} < live;
}
/* exp(d) for d <= 0 or -inf in float64, within 2 ulps: d clamped at -708 (exp(-708) ~ 3e-308
 * against a row sum of at least 1; 2^k stays normal), d = k ln2 + r as in the float kits with
 * the 1.5 * 2^52 shift holding the bias 1023, ln2 in two parts (vec_math.h's, k ln2_hi exact),
 * exp(r) by its Taylor polynomial to r^13 (truncation 5e-18 relative). */
TT_AVX2_FMA TT_VEC_INLINE tt_d4_f tt_d4_exp_nonpositive(tt_d4_f d)
{
    const tt_d4_f clamped = tt_d4_max(d, tt_d4_CONST(-708.0));
    const tt_d4_f shifter = tt_d4_CONST(6755399441055744.0 + 1023.0);
    const tt_d4_f t = TT_D4_FMA(clamped, tt_d4_CONST(1.4426950408889634), shifter);
    const tt_d4_f k = t - shifter;
    const tt_d4_f r = TT_D4_FMA(k, tt_d4_CONST(-TT_VEC_LN2_LO),
                                TT_D4_FMA(k, tt_d4_CONST(-TT_VEC_LN2_HI), clamped));
    tt_d4_f p = TT_D4_FMA(r, tt_d4_CONST(1.0 / 6227020800.0), tt_d4_CONST(1.0 / 479001600.0));
    p = TT_D4_FMA(p, r, tt_d4_CONST(1.0 / 39916800.0));
    p = TT_D4_FMA(p, r, tt_d4_CONST(1.0 / 3628800.0));
    p = TT_D4_FMA(p, r, tt_d4_CONST(1.0 / 362880.0));
    p = TT_D4_FMA(p, r, tt_d4_CONST(1.0 / 40320.0));
    p = TT_D4_FMA(p, r, tt_d4_CONST(1.0 / 5040.0));
    p = TT_D4_FMA(p, r, tt_d4_CONST(1.0 / 720.0));
    p = TT_D4_FMA(p, r, tt_d4_CONST(1.0 / 120.0));
    p = TT_D4_FMA(p, r, tt_d4_CONST(1.0 / 24.0));
    p = TT_D4_FMA(p, r, tt_d4_CONST(1.0 / 6.0));
    p = TT_D4_FMA(p, r, tt_d4_CONST(0.5));
    p = TT_D4_FMA(p, r, tt_d4_CONST(1.0));
    p = TT_D4_FMA(p, r, tt_d4_CONST(1.0));
    return p * (tt_d4_f)((tt_d4_u)t << 52);
}
TT_AVX2_FMA TT_VEC_INLINE void tt_d4_add_wide(tt_d4_acc *lo, tt_d4_acc *hi, tt_d4_f e)
{
    (void)hi;
    *lo += e;
}
TT_AVX2_FMA TT_VEC_INLINE double tt_d4_acc_sum(tt_d4_acc a)
{
    return (a[0] + a[1]) + (a[2] + a[3]);
}
#endif

/* The two passes over LEN (>= 1) contiguous elements of type T on kit K (LOAD: K's loader for
 * T, PAD: T's -inf), as PREFIX_max and PREFIX_exp_sum: the block's maximum as a float (*finite
 * cleared when an element is NaN or +inf), then sum(exp(x - top)) in float64 for a top >= every
 * element. Two vectors per iteration, each with its own maximum and its own float64 sums, so that
 * no iteration waits on the last one's result. The last LEN mod W elements come in PREFIX_last,
 * the block's last W elements (its first lanes repeat elements already read: harmless to the
 * maximum, masked out of the sum), padded with -inf only in a block shorter than one vector. */
#define BLOCK_PASSES(PREFIX, T, K, LOAD, PAD, ATTRIBUTE)                                           \
    ATTRIBUTE static inline K##_f PREFIX##_last(const T *x, int64_t len)                           \
    {                                                                                              \
        if (len >= K##_LANES)                                                                      \
            return K##_##LOAD(x + len - K##_LANES);                                                \
        T pad[K##_LANES];                                                                          \
        for (int j = 0; j < K##_LANES; j++)                                                        \
            pad[j] = j < len ? x[j] : (T)(PAD);                                                    \
        return K##_##LOAD(pad);                                                                    \
    }                                                                                              \
    static inline ATTRIBUTE K##_s PREFIX##_max(const T *x, int64_t len, int *finite)               \
    {                                                                                              \
        const int64_t w = K##_LANES, whole = len - len % w;                                        \
        const K##_f last = PREFIX##_last(x, len);                                                  \
        K##_f top0 = last, top1 = last;                                                            \
        K##_i ok = K##_below_inf(last);                                                            \
        int64_t k = 0;                                                                             \
        for (; k + 2 * w <= whole; k += 2 * w) {                                                   \
            const K##_f a = K##_##LOAD(x + k), b = K##_##LOAD(x + k + w);                          \
            ok &= K##_below_inf(a) & K##_below_inf(b);                                             \
            top0 = K##_max(a, top0);                                                               \
            top1 = K##_max(b, top1);                                                               \
        }                                                                                          \
        if (k < whole) {                                                                           \
            const K##_f a = K##_##LOAD(x + k);                                                     \
            ok &= K##_below_inf(a);                                                                \
            top0 = K##_max(a, top0);                                                               \
        }                                                                                          \
        top0 = K##_max(top1, top0);                                                                \
        K##_s top = top0[0];                                                                       \
        int all = ok[0];                                                                           \
        for (int j = 1; j < K##_LANES; j++) {                                                      \
            top = top0[j] > top ? top0[j] : top;                                                   \
            all &= ok[j];                                                                          \
        }                                                                                          \
        *finite = all != 0;                                                                        \
        return top;                                                                                \
    }                                                                                              \
    static inline ATTRIBUTE double /* NOLINT(bugprone-macro-parentheses) */ PREFIX##_exp_sum(      \
        const T *x, int64_t len, K##_s top)                                                        \
    {                                                                                              \
        const int64_t w = K##_LANES, whole = len - len % w;                                        \
        const K##_f shift = K##_splat(top);                                                        \
        K##_acc lo0 = {0}, hi0 = {0}, lo1 = {0}, hi1 = {0};                                        \
        int64_t k = 0;                                                                             \
        for (; k + 2 * w <= whole; k += 2 * w) {                                                   \
            K##_add_wide(&lo0, &hi0, K##_exp_nonpositive(K##_##LOAD(x + k) - shift));              \
            K##_add_wide(&lo1, &hi1, K##_exp_nonpositive(K##_##LOAD(x + k + w) - shift));          \
        }                                                                                          \
        if (k < whole)                                                                             \
            K##_add_wide(&lo0, &hi0, K##_exp_nonpositive(K##_##LOAD(x + k) - shift));              \
        const K##_f tail = K##_exp_nonpositive(PREFIX##_last(x, len) - shift);                     \
        const K##_i fresh = len >= w ? ~K##_lanes_below(whole + w - len) : K##_lanes_below(len);   \
        K##_add_wide(&lo1, &hi1, (K##_f)((K##_i)tail & fresh));                                    \
        return K##_acc_sum((lo0 + hi0) + (lo1 + hi1));                                             \
    }

/* Strided rows are gathered TT_ROW_BLOCK elements at a time (16 KB of float32: both passes over
 * a block run from L1, and the row is read once): the running maximum `top` and sum(exp(x -
 * top)), rescaled by exp(old top - new top) in float64 when a block raises the maximum (a few
 * times per row). */
#define TT_ROW_BLOCK 4096

/* Folds a block's maximum m into (top, sum) and returns the top its exponentials take. */
static inline float tt_row_raise(float m, float *top, double *sum)
{
    if (m > *top) {
        if (*sum > 0.0) /* not on a row's first block: no libm call for a short row */
            *sum *= exp((double)*top - (double)m);
        *top = m;
    }
    return *top;
}

/* A contiguous row of V elements of type T through PREFIX's passes, each over the whole row (a
 * row of a language model's vocabulary, 128 KB of float32, stays in L2 for the second): its
 * maximum in *top_out and sum(exp(x - max)) in float64 in *sum_out. A row with a NaN or +inf goes
 * to STRIDED (the scalar function of the same signature), which names the element; a row of -inf
 * only is *bad = -1. */
#define CONTIGUOUS_ROW(NAME, T, PREFIX, STRIDED, ATTRIBUTE)                                        \
    ATTRIBUTE static int NAME(const char *p, int64_t step, int64_t v, double *top_out,             \
                              double *sum_out, int64_t *bad)                                       \
    {                                                                                              \
        int finite = 1;                                                                            \
        const double top = PREFIX##_max((const T *)p, v, &finite); /* a float: exact */            \
        if (!finite)                                                                               \
            return STRIDED(p, step, v, top_out, sum_out, bad);                                     \
        if (top == -INFINITY) {                                                                    \
            *bad = -1;                                                                             \
            return 1;                                                                              \
        }                                                                                          \
        *top_out = top;                                                                            \
        *sum_out = PREFIX##_exp_sum((const T *)p, v, top);                                         \
        return 0;                                                                                  \
    }

/* A strided row of any float dtype but float64 (AT: view.h's element load), the same way: a
 * block at a time copied, as float32 (exact), into a buffer that the float32 passes read. */
#define GATHERED_ROW(NAME, AT, PREFIX, STRIDED, ATTRIBUTE)                                         \
    ATTRIBUTE static int NAME(const char *p, int64_t step, int64_t v, double *top_out,             \
                              double *sum_out, int64_t *bad)                                       \
    {                                                                                              \
        float buffer[TT_ROW_BLOCK];                                                                \
        float top = -INFINITY;                                                                     \
        double sum = 0.0;                                                                          \
        for (int64_t b = 0; b < v; b += TT_ROW_BLOCK) {                                            \
            const int64_t len = v - b < TT_ROW_BLOCK ? v - b : TT_ROW_BLOCK;                       \
            for (int64_t k = 0; k < len; k++)                                                      \
                buffer[k] = AT(p + (b + k) * step);                                                \
            int finite = 1;                                                                        \
            const float m = PREFIX##_max(buffer, len, &finite);                                    \
            if (!finite)                                                                           \
                return STRIDED(p, step, v, top_out, sum_out, bad);                                 \
            if (m > -INFINITY)                                                                     \
                sum += PREFIX##_exp_sum(buffer, len, tt_row_raise(m, &top, &sum));                 \
        }                                                                                          \
        if (top == -INFINITY) {                                                                    \
            *bad = -1;                                                                             \
            return 1;                                                                              \
        }                                                                                          \
        *top_out = (double)top;                                                                    \
        *sum_out = sum;                                                                            \
        return 0;                                                                                  \
    }

#pragma GCC diagnostic pop

#endif /* TT_PERPLEXITY_ROWS_H */
