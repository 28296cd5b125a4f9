/*
 * perplexity.c: per token of a [N, T, V] batch of logits, the log-probability of its target,
 * log softmax(x)[y] = x[y] - max(x) - log(sum(exp(x - max(x)))), without forming the [N, T, V]
 * probabilities: one pass for the row's maximum (and its NaN / +inf check), one for the sum of
 * exponentials, accumulated in float64. The workload: a language model's evaluation batches,
 * [32, 1024, 32000] and larger, and short rows (V ~ 100) in many small batches; O(N T V) time,
 * O(1) memory. Float32, bfloat16 and float16 rows take perplexity_rows.h's vector loops (a
 * float exp within 2 ulps, eight lanes with FMA where the CPU has AVX2; a strided row gathered
 * into float32 a block at a time), float64 rows an exp in double (four lanes with AVX2 when
 * contiguous, libm's otherwise). ROW_LSE, the scalar loop, names a NaN or +inf element for all
 * of them. log(sum) is taken for LOG_BATCH rows at a time with vec_math.h's four-lane log.
 *
 * The sums are formed in locals and added to the states only when every row was read, so a bad
 * element (a NaN or +inf logit, a row of -inf only, a target outside [0, V)) leaves them untouched.
 */
#include "kernels/perplexity.h"

#include <math.h>

#include "kernels/simd.h"

/* One row of V logits (byte step `step`), any dtype and stride: its maximum in *top and
 * sum(exp(x - top)) in *sum, or an error status (*bad: the index of a NaN or +inf, -1 for a row
 * of -inf only). */
#define ROW_LSE(NAME, LOAD, EXP)                                                                   \
    static int NAME(const char *p, int64_t step, int64_t v, double *top_out, double *sum_out,      \
                    int64_t *bad)                                                                  \
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
        *top_out = top;                                                                            \
        *sum_out = sum;                                                                            \
        return 0;                                                                                  \
    }

static inline double exp_float(float x, double top) { return (double)expf(x - (float)top); }
static inline double exp_double(double x, double top) { return exp(x - top); }

ROW_LSE(row_f32, tt_f32_at, exp_float)
ROW_LSE(row_f64, tt_f64_at, exp_double)
ROW_LSE(row_f16, tt_f16_at, exp_double)
ROW_LSE(row_bf16, tt_bf16_at, exp_double)

#include "kernels/perplexity_rows.h"

/* Float32, bfloat16 and float16 rows: perplexity_rows.h's vector passes, four lanes for the
 * build's baseline (SSE2 on x86-64), eight with FMA for AVX2 (the same value to float rounding,
 * not the same bits); strided rows gathered a block at a time into float32. */
BLOCK_PASSES(k4_f32, float, tt_k4, load_f32, -INFINITY, )
BLOCK_PASSES(k4_bf16, uint16_t, tt_k4, load_bf16, 0xFF80u, )
BLOCK_PASSES(k4_f16, uint16_t, tt_k4, load_f16, 0xFC00u, )
CONTIGUOUS_ROW(row_f32_contiguous, float, k4_f32, row_f32, )
CONTIGUOUS_ROW(row_bf16_contiguous, uint16_t, k4_bf16, row_bf16, )
CONTIGUOUS_ROW(row_f16_contiguous, uint16_t, k4_f16, row_f16, )
GATHERED_ROW(row_f32_gathered, tt_f32_at, k4_f32, row_f32, )
GATHERED_ROW(row_bf16_gathered, tt_bf16_at, k4_f32, row_bf16, )
GATHERED_ROW(row_f16_gathered, tt_f16_at, k4_f32, row_f16, )
#ifdef TT_HAVE_AVX2_TARGET
BLOCK_PASSES(k8_f32, float, tt_k8, load_f32, -INFINITY, TT_AVX2_FMA)
BLOCK_PASSES(k8_bf16, uint16_t, tt_k8, load_bf16, 0xFF80u, TT_AVX2_FMA)
BLOCK_PASSES(k8_f16, uint16_t, tt_k8, load_f16, 0xFC00u, TT_AVX2_FMA)
CONTIGUOUS_ROW(row_f32_avx2, float, k8_f32, row_f32, TT_AVX2_FMA)
CONTIGUOUS_ROW(row_bf16_avx2, uint16_t, k8_bf16, row_bf16, TT_AVX2_FMA)
CONTIGUOUS_ROW(row_f16_avx2, uint16_t, k8_f16, row_f16, TT_AVX2_FMA)
GATHERED_ROW(row_f32_gathered_avx2, tt_f32_at, k8_f32, row_f32, TT_AVX2_FMA)
GATHERED_ROW(row_bf16_gathered_avx2, tt_bf16_at, k8_f32, row_bf16, TT_AVX2_FMA)
GATHERED_ROW(row_f16_gathered_avx2, tt_f16_at, k8_f32, row_f16, TT_AVX2_FMA)
BLOCK_PASSES(d4_f64, double, tt_d4, load_f64, -INFINITY, TT_AVX2_FMA)
CONTIGUOUS_ROW(row_f64_avx2, double, d4_f64, row_f64, TT_AVX2_FMA)
#endif

/* sum of log(s[i]) over n values >= 1 (a row's sum has its maximum's term, exp(0) = 1): four at a
 * time with vec_math.h's log (1 ulp), the last group padded with 1 (log 1 = 0 exactly). A call to
 * libm's log per row costs as much as the exponentials of a short row. */
static double sum_of_logs(const double *s, int n)
{
    tt_v4d acc = tt_vec_splat(0.0);
    int i = 0;
    for (; i + TT_VEC_LANES <= n; i += TT_VEC_LANES)
        acc += tt_vec_log(tt_vec_load_f64(s + i));
    if (i < n) {
        double last[TT_VEC_LANES] = {1.0, 1.0, 1.0, 1.0};
        for (int j = 0; i + j < n; j++)
            last[j] = s[i + j];
        acc += tt_vec_log(tt_vec_load_f64(last));
    }
    return (acc[0] + acc[1]) + (acc[2] + acc[3]);
}

typedef int (*row_fn)(const char *p, int64_t step, int64_t v, double *top, double *sum,
                      int64_t *bad);

#define LOG_BATCH 64

/* The row function for a dtype and a row layout: perplexity_rows.h's vector passes for float32,
 * bfloat16 and float16 (read in place when the row is contiguous, gathered otherwise; the AVX2
 * copy where `avx2`); float64 in double, four lanes with AVX2 for a contiguous row, else the
 * scalar loop. */
static row_fn pick_row(tt_dtype dtype, int contiguous, int avx2)
{
#ifdef TT_HAVE_AVX2_TARGET
    if (dtype == TT_F64)
        return avx2 && contiguous ? row_f64_avx2 : row_f64;
    if (avx2 && contiguous)
        return dtype == TT_F32 ? row_f32_avx2 : dtype == TT_BF16 ? row_bf16_avx2 : row_f16_avx2;
    if (avx2)
        return dtype == TT_F32    ? row_f32_gathered_avx2
               : dtype == TT_BF16 ? row_bf16_gathered_avx2
                                  : row_f16_gathered_avx2;
#endif
    (void)avx2;
    if (dtype == TT_F64)
        return row_f64;
    if (contiguous)
        return dtype == TT_F32    ? row_f32_contiguous
               : dtype == TT_BF16 ? row_bf16_contiguous
                                  : row_f16_contiguous;
    return dtype == TT_F32    ? row_f32_gathered
           : dtype == TT_BF16 ? row_bf16_gathered
                              : row_f16_gathered;
}

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
    const int avx2 = tt_simd_level() >= TT_SIMD_AVX2 && __builtin_cpu_supports("fma") &&
                     __builtin_cpu_supports("f16c");
#else
    const int avx2 = 0;
#endif
    row_fn row = pick_row(preds->dtype, contiguous, avx2);
    const int64_t s0 = tt_step(preds, 0), s1 = tt_step(preds, 1), s2 = tt_step(preds, 2);
    const int64_t *y = (const int64_t *)target->data;
    const int64_t y0 = target->stride[0], y1 = target->stride[1];
    double nll = 0.0, sums[LOG_BATCH];
    int pending = 0;
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
            double top = 0.0;
            int64_t bad = 0;
            if (row(p, s2, v, &top, &sums[pending], &bad)) {
                if (bad < 0)
                    return tt_fail(err, TT_EVALUE, "preds",
                                   "row [%lld, %lld] is -inf everywhere (no probability to share)",
                                   (long long)i, (long long)j);
                return tt_fail(err, TT_EVALUE, "preds",
                               "expected no NaN or +inf, got %g at [%lld, %lld, %lld]",
                               tt_load_score(p + bad * s2, preds->dtype), (long long)i,
                               (long long)j, (long long)bad);
            }
            /* -log softmax(x)[y] = top + log(sum) - x[y]; the logs are taken LOG_BATCH at a time */
            nll += top - tt_load_score(p + label * s2, preds->dtype);
            if (++pending == LOG_BATCH) {
                nll += sum_of_logs(sums, pending);
                pending = 0;
            }
            counted++;
        }
    }
    nll += sum_of_logs(sums, pending);
    *(double *)total->data += nll;
    *(int64_t *)count->data += counted;
    return TT_OK;
}
