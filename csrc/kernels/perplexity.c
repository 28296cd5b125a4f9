/*
 * perplexity.c: per token of a [N, T, V] batch of logits, the log-probability of its target,
 * log softmax(x)[y] = x[y] - max(x) - log(sum(exp(x - max(x)))), without forming the [N, T, V]
 * probabilities: one pass for the row's maximum (and its NaN / +inf check), one for the sum of
 * exponentials, accumulated in float64. The workload: a language model's evaluation batches,
 * [32, 1024, 32000] and larger; O(N T V) time, O(1) memory. Contiguous float32 and bfloat16
 * rows (the common case) take a branch-free float exp that the compiler vectorises (an AVX2
 * copy where the CPU has it), strided float32 rows expf on the float difference (2^-24 relative
 * per term, below the float32 logits' own rounding), the other dtypes exp in double.
 *
 * The sums are formed in locals and added to the states only when every row was read, so a bad
 * element (a NaN or +inf logit, a row of -inf only, a target outside [0, V)) leaves them untouched.
 */
#include "kernels/perplexity.h"

#include <math.h>

#include "kernels/simd.h"

/* One row of V logits (byte step `step`): its log-sum-exp in *lse, or an error status. */
#define ROW_LSE(NAME, LOAD, EXP)                                                                   \
    static int NAME(const char *p, int64_t step, int64_t v, double *lse, int64_t *bad)             \
    {                                                                                              \
        double top = -INFINITY;                                                                    \
        for (int64_t k = 0; k < v; k++) {                                                          \
            const double x = (double)LOAD(p + k * step);                                           \
            if (!(x < INFINITY)) { /* NaN or +inf */                                               \
                *bad = k;                                                                          \
                return 1;                                                                          \
            }                                                                                      \
            top = x > top ? x : top;                                                               \
        }                                                                                          \
        if (top == -INFINITY) {                                                                    \
            *bad = -1;                                                                             \
            return 1;                                                                              \
        }                                                                                          \
        double sum = 0.0;                                                                          \
        for (int64_t k = 0; k < v; k++)                                                            \
            sum += EXP(LOAD(p + k * step), top);                                                   \
        *lse = top + log(sum);                                                                     \
        return 0;                                                                                  \
    }

static inline double exp_float(float x, double top) { return (double)expf(x - (float)top); }
static inline double exp_double(double x, double top) { return exp(x - top); }

ROW_LSE(row_f32, tt_f32_at, exp_float)
ROW_LSE(row_f64, tt_f64_at, exp_double)
ROW_LSE(row_f16, tt_f16_at, exp_double)
ROW_LSE(row_bf16, tt_bf16_at, exp_double)

/* exp(d) for d <= 0 (or -inf) in float, without a call or a branch, so that a loop of it
 * vectorises: d clamped at -87 by its bits (for d <= 0 the larger magnitude has the larger
 * bits; exp(-87) ~ 2e-38 against a sum of at least 1), d = k ln2 + r with |r| <= ln2 / 2 (k
 * rounded by the 1.5 * 2^23 shift), exp(r) by its Taylor polynomial to r^7 (truncation 5e-9
 * relative), 2^k put into the exponent bits: within a few float ulps of exp(d). */
static inline __attribute__((always_inline)) float exp_nonpositive(float d)
{
    uint32_t bits;
    memcpy(&bits, &d, sizeof bits);
    bits = bits < 0xC2AE0000u ? bits : 0xC2AE0000u; /* -87.0f */
    memcpy(&d, &bits, sizeof d);
    const float t = d * 1.44269504f + 12582912.0f;
    const float k = t - 12582912.0f;
    const float r = (d - k * 0.693145751953125f) - k * 1.428606765330187e-06f;
    float p = 1.0f / 5040.0f;
    p = p * r + 1.0f / 720.0f;
    p = p * r + 1.0f / 120.0f;
    p = p * r + 1.0f / 24.0f;
    p = p * r + 1.0f / 6.0f;
    p = p * r + 0.5f;
    p = p * r + 1.0f;
    p = p * r + 1.0f;
    int32_t tbits;
    memcpy(&tbits, &t, sizeof tbits);
    const int32_t scale_bits = (tbits - 0x4B400000 + 127) * (1 << 23); /* k >= -126: a normal 2^k */
    float scale;
    memcpy(&scale, &scale_bits, sizeof scale);
    return p * scale;
}

#define BLOCK 512
#define LANES 8

/* A contiguous float32 (or bfloat16, widened exactly) row: ROW_LSE's result (a row with NaN
 * or +inf goes to the strided function, which names the element), its exponentials formed a
 * block at a time into a float buffer (a loop the compiler vectorises) and summed into LANES
 * float64 sums. */
#define CONTIGUOUS_F32(NAME, T, LOAD, STRIDED, ATTRIBUTE)                                          \
    ATTRIBUTE static int NAME(const char *p, int64_t step, int64_t v, double *lse, int64_t *bad)   \
    {                                                                                              \
        const T *x = (const T *)p;                                                                 \
        float top = -INFINITY;                                                                     \
        int nonfinite = 0;                                                                         \
        for (int64_t k = 0; k < v; k++) {                                                          \
            const float xk = LOAD(x[k]);                                                           \
            nonfinite |= !(xk < INFINITY);                                                         \
            top = xk > top ? xk : top;                                                             \
        }                                                                                          \
        if (nonfinite)                                                                             \
            return STRIDED(p, step, v, lse, bad);                                                  \
        if (top == -INFINITY) {                                                                    \
            *bad = -1;                                                                             \
            return 1;                                                                              \
        }                                                                                          \
        double acc[LANES] = {0.0};                                                                 \
        float e[BLOCK];                                                                            \
        for (int64_t b = 0; b < v; b += BLOCK) {                                                   \
            const int64_t len = v - b < BLOCK ? v - b : BLOCK;                                     \
            for (int64_t k = 0; k < len; k++)                                                      \
                e[k] = exp_nonpositive(LOAD(x[b + k]) - top);                                      \
            int64_t k = 0;                                                                         \
            for (; k + LANES <= len; k += LANES)                                                   \
                for (int j = 0; j < LANES; j++)                                                    \
                    acc[j] += (double)e[k + j];                                                    \
            for (; k < len; k++)                                                                   \
                acc[0] += (double)e[k];                                                            \
        }                                                                                          \
        double sum = 0.0;                                                                          \
        for (int j = 0; j < LANES; j++)                                                            \
            sum += acc[j];                                                                         \
        *lse = (double)top + log(sum);                                                             \
        return 0;                                                                                  \
    }

#define AS_FLOAT(x) (x)
#define BF16_AS_FLOAT(x) tt_bf16_to_float(x)

CONTIGUOUS_F32(row_f32_contiguous, float, AS_FLOAT, row_f32, )
CONTIGUOUS_F32(row_bf16_contiguous, uint16_t, BF16_AS_FLOAT, row_bf16, )
#ifdef TT_HAVE_AVX2_TARGET
CONTIGUOUS_F32(row_f32_avx2, float, AS_FLOAT, row_f32, __attribute__((target("avx2,fma"))))
CONTIGUOUS_F32(row_bf16_avx2, uint16_t, BF16_AS_FLOAT, row_bf16,
               __attribute__((target("avx2,fma"))))
#endif

typedef int (*row_fn)(const char *p, int64_t step, int64_t v, double *lse, int64_t *bad);

tt_status tt_perplexity_update(const tt_view *total, const tt_view *count, const tt_view *preds,
                               const tt_view *target, const int64_t *ignore_index, tt_error *err)
{
    char got[96];
    tt_status st = tt_check_out(total, "total", TT_F64, 0, NULL, err);
    if (st == TT_OK)
        st = tt_check_out(count, "count", TT_I64, 0, NULL, err);
    if (st == TT_OK)
        st = tt_check_scores(preds, "preds", 3, err);
    if (st != TT_OK)
        return st;
    if (target->dtype != TT_I64)
        return tt_fail(err, TT_ETYPE, "target", "expected int64 token ids [N, T], got %s",
                       tt_describe(target, got, sizeof got));
    if (target->ndim != 2 || target->shape[0] != preds->shape[0] ||
        target->shape[1] != preds->shape[1])
        return tt_fail(err, TT_EVALUE, "target",
                       "expected the shape [%lld, %lld] of preds' first two dimensions, got %s",
                       (long long)preds->shape[0], (long long)preds->shape[1],
                       tt_describe(target, got, sizeof got));
    st = tt_check_cpu(target, "target", err);
    if (st != TT_OK)
        return st;
    const int64_t n = preds->shape[0], t = preds->shape[1], v = preds->shape[2];
    if (v == 0 && n * t > 0)
        return tt_fail(err, TT_EVALUE, "preds", "expected a vocabulary of at least 1, got %s",
                       tt_describe(preds, got, sizeof got));
    const int contiguous = preds->stride[2] == 1;
#ifdef TT_HAVE_AVX2_TARGET
    const int avx2 = tt_simd_level() >= TT_SIMD_AVX2;
    row_fn f32_contiguous = avx2 ? row_f32_avx2 : row_f32_contiguous;
    row_fn bf16_contiguous = avx2 ? row_bf16_avx2 : row_bf16_contiguous;
#else
    row_fn f32_contiguous = row_f32_contiguous;
    row_fn bf16_contiguous = row_bf16_contiguous;
#endif
    row_fn row = preds->dtype == TT_F32   ? (contiguous ? f32_contiguous : row_f32)
                 : preds->dtype == TT_F64 ? row_f64
                 : preds->dtype == TT_F16 ? row_f16
                                          : (contiguous ? bf16_contiguous : row_bf16);
    const int64_t s0 = tt_step(preds, 0), s1 = tt_step(preds, 1), s2 = tt_step(preds, 2);
    const int64_t *y = (const int64_t *)target->data;
    const int64_t y0 = target->stride[0], y1 = target->stride[1];
    double nll = 0.0;
    int64_t counted = 0;
    for (int64_t i = 0; i < n; i++) {
        for (int64_t j = 0; j < t; j++) {
            const int64_t label = y[i * y0 + j * y1];
            if (ignore_index != NULL && label == *ignore_index)
                continue;
            if (label < 0 || label >= v)
                return tt_fail(err, TT_EVALUE, "target",
                               "token id %lld at [%lld, %lld] is out of range [0, %lld)",
                               (long long)label, (long long)i, (long long)j, (long long)v);
            const char *p = preds->data + i * s0 + j * s1;
            double lse = 0.0;
            int64_t bad = 0;
            if (row(p, s2, v, &lse, &bad)) {
                if (bad < 0)
                    return tt_fail(err, TT_EVALUE, "preds",
                                   "row [%lld, %lld] is -inf everywhere (no probability to share)",
                                   (long long)i, (long long)j);
                return tt_fail(err, TT_EVALUE, "preds",
                               "expected no NaN or +inf, got %g at [%lld, %lld, %lld]",
                               tt_load_score(p + bad * s2, preds->dtype), (long long)i,
                               (long long)j, (long long)bad);
            }
            nll += lse - tt_load_score(p + label * s2, preds->dtype);
            counted++;
        }
    }
    *(double *)total->data += nll;
    *(int64_t *)count->data += counted;
    return TT_OK;
}
