/*
 * signal_sums.c: the float64 energies of the audio signal metrics, per utterance, straight from
 * the samples. torch would widen both signals to float64, centre them, subtract, multiply and
 * square: a handful of full-size passes and float64 copies per metric. Here each row is read in
 * chunks of TT_CHUNK samples (contiguous float32 / float64 in place, anything else widened to
 * double into a buffer that stays in L1) and summed in eight lanes in one loop the compiler
 * vectorises, each chunk's sum added to the row's total (a two-level sum: the rounding error
 * grows with the number of chunks, not of samples).
 *
 * Why up to three passes and not the one-pass identities: the centred sums from raw ones
 * (sum t'^2 = sum t^2 - (sum t)^2 / T) cancel catastrophically when a signal's mean dwarfs its
 * spread, and the residual energies from dot products (|p - t|^2 = |p|^2 - 2<p, t> + |t|^2, or
 * the projection's |g t - p|^2 = |p|^2 - <p, t>^2 / |t|^2) cancel when the prediction is close to
 * (a multiple of) the target, the very case a good model gives. So the means come first (a pass
 * of plain sums, only when zero_mean), the energies are sums of the centred samples and of their
 * difference themselves, and the projection residual is summed directly once the gain is known
 * (a third pass, only when asked for). The loops are compiled a second time for AVX2 where the CPU has it (no FMA: both
 * copies give the same bits).
 */
#include "kernels/signal_sums.h"

#include <math.h>
#include <stdlib.h>

#include "kernels/simd.h"

#define LANES 8

/* The lanes added in a fixed order (the AVX2 copies store their vectors into this layout). */
static inline double fold(const double *lane)
{
    return ((lane[0] + lane[1]) + (lane[2] + lane[3])) +
           ((lane[4] + lane[5]) + (lane[6] + lane[7]));
}

/* The three per-chunk loops, over n samples of p and t (float or double, read in place), each
 * adding its chunk sums to acc. `shift` holds (mean of p, mean of t, gain); lane l takes the
 * samples i = l mod LANES, the last n % LANES samples go to lane 0.
 *   means:    acc[0] += sum p, acc[1] += sum t
 *   energies: with p' = p - mean p, t' = t - mean t: acc += (sum t'^2, sum t' p', sum (p' - t')^2)
 *   residual: acc[0] += sum (gain t' - p')^2 */
#define ONE_ENERGY(P, T, L)                                                                        \
    do {                                                                                           \
        const double tc = (double)(T) - shift[1], pc = (double)(P) - shift[0], d = pc - tc;        \
        tt[L] += tc * tc;                                                                          \
        tp[L] += tc * pc;                                                                          \
        dd[L] += d * d;                                                                            \
    } while (0)

#define ONE_RESIDUAL(P, T, L)                                                                      \
    do {                                                                                           \
        const double r = shift[2] * ((double)(T) - shift[1]) - ((double)(P) - shift[0]);           \
        rr[L] += r * r;                                                                            \
    } while (0)

#define LOOPS(SUFFIX, T)                                                                           \
    static void means_##SUFFIX(const T *restrict p, const T *restrict t, int64_t n,                \
                               const double *shift, double *restrict acc)                          \
    {                                                                                              \
        double sp[LANES] = {0}, st[LANES] = {0};                                                   \
        int64_t i = 0;                                                                             \
        for (; i + LANES <= n; i += LANES)                                                         \
            for (int l = 0; l < LANES; l++) {                                                      \
                sp[l] += (double)p[i + l];                                                         \
                st[l] += (double)t[i + l];                                                         \
            }                                                                                      \
        for (; i < n; i++) {                                                                       \
            sp[0] += (double)p[i];                                                                 \
            st[0] += (double)t[i];                                                                 \
        }                                                                                          \
        acc[0] += fold(sp);                                                                        \
        acc[1] += fold(st);                                                                        \
    }                                                                                              \
    static void energies_##SUFFIX(const T *restrict p, const T *restrict t, int64_t n,             \
                                  const double *shift, double *restrict acc)                       \
    {                                                                                              \
        double tt[LANES] = {0}, tp[LANES] = {0}, dd[LANES] = {0};                                  \
        int64_t i = 0;                                                                             \
        for (; i + LANES <= n; i += LANES)                                                         \
            for (int l = 0; l < LANES; l++)                                                        \
                ONE_ENERGY(p[i + l], t[i + l], l);                                                 \
        for (; i < n; i++)                                                                         \
            ONE_ENERGY(p[i], t[i], 0);                                                             \
        acc[0] += fold(tt);                                                                        \
        acc[1] += fold(tp);                                                                        \
        acc[2] += fold(dd);                                                                        \
    }                                                                                              \
    static void residual_##SUFFIX(const T *restrict p, const T *restrict t, int64_t n,             \
                                  const double *shift, double *restrict acc)                       \
    {                                                                                              \
        double rr[LANES] = {0};                                                                    \
        int64_t i = 0;                                                                             \
        for (; i + LANES <= n; i += LANES)                                                         \
            for (int l = 0; l < LANES; l++)                                                        \
                ONE_RESIDUAL(p[i + l], t[i + l], l);                                               \
        for (; i < n; i++)                                                                         \
            ONE_RESIDUAL(p[i], t[i], 0);                                                           \
        acc[0] += fold(rr);                                                                        \
    }

LOOPS(f32_base, float)
LOOPS(f64_base, double)

#ifdef TT_HAVE_AVX2_TARGET
#include <immintrin.h>

/* The same loops in AVX2 intrinsics: vector a holds lanes 0-3, vector b lanes 4-7, and the
 * arithmetic is the scalar copy's, operation for operation, so both give the same bits. */
#define AVX2 __attribute__((target("avx2")))
#define LOAD_F64(x) _mm256_loadu_pd(x)
#define LOAD_F32(x) _mm256_cvtps_pd(_mm_loadu_ps(x))
#define ADD _mm256_add_pd
#define SUB _mm256_sub_pd
#define MUL _mm256_mul_pd

#define LOOPS_AVX2(SUFFIX, T, LOAD4)                                                               \
    AVX2 static void means_##SUFFIX(const T *restrict p, const T *restrict t, int64_t n,           \
                                    const double *shift, double *restrict acc)                     \
    {                                                                                              \
        __m256d spa = _mm256_setzero_pd(), spb = spa, sta = spa, stb = spa;                        \
        int64_t i = 0;                                                                             \
        for (; i + LANES <= n; i += LANES) {                                                       \
            spa = ADD(spa, LOAD4(p + i));                                                          \
            spb = ADD(spb, LOAD4(p + i + 4));                                                      \
            sta = ADD(sta, LOAD4(t + i));                                                          \
            stb = ADD(stb, LOAD4(t + i + 4));                                                      \
        }                                                                                          \
        double sp[LANES], st[LANES];                                                               \
        _mm256_storeu_pd(sp, spa);                                                                 \
        _mm256_storeu_pd(sp + 4, spb);                                                             \
        _mm256_storeu_pd(st, sta);                                                                 \
        _mm256_storeu_pd(st + 4, stb);                                                             \
        for (; i < n; i++) {                                                                       \
            sp[0] += (double)p[i];                                                                 \
            st[0] += (double)t[i];                                                                 \
        }                                                                                          \
        acc[0] += fold(sp);                                                                        \
        acc[1] += fold(st);                                                                        \
    }                                                                                              \
    AVX2 static void energies_##SUFFIX(const T *restrict p, const T *restrict t, int64_t n,        \
                                       const double *shift, double *restrict acc)                  \
    {                                                                                              \
        const __m256d mp = _mm256_set1_pd(shift[0]), mt = _mm256_set1_pd(shift[1]);                \
        __m256d tta = _mm256_setzero_pd(), ttb = tta, tpa = tta, tpb = tta, dda = tta, ddb = tta;  \
        int64_t i = 0;                                                                             \
        for (; i + LANES <= n; i += LANES) {                                                       \
            const __m256d ta = SUB(LOAD4(t + i), mt), tb = SUB(LOAD4(t + i + 4), mt);              \
            const __m256d pa = SUB(LOAD4(p + i), mp), pb = SUB(LOAD4(p + i + 4), mp);              \
            const __m256d da = SUB(pa, ta), db = SUB(pb, tb);                                      \
            tta = ADD(tta, MUL(ta, ta));                                                           \
            ttb = ADD(ttb, MUL(tb, tb));                                                           \
            tpa = ADD(tpa, MUL(ta, pa));                                                           \
            tpb = ADD(tpb, MUL(tb, pb));                                                           \
            dda = ADD(dda, MUL(da, da));                                                           \
            ddb = ADD(ddb, MUL(db, db));                                                           \
        }                                                                                          \
        double tt[LANES], tp[LANES], dd[LANES];                                                    \
        _mm256_storeu_pd(tt, tta);                                                                 \
        _mm256_storeu_pd(tt + 4, ttb);                                                             \
        _mm256_storeu_pd(tp, tpa);                                                                 \
        _mm256_storeu_pd(tp + 4, tpb);                                                             \
        _mm256_storeu_pd(dd, dda);                                                                 \
        _mm256_storeu_pd(dd + 4, ddb);                                                             \
        for (; i < n; i++)                                                                         \
            ONE_ENERGY(p[i], t[i], 0);                                                             \
        acc[0] += fold(tt);                                                                        \
        acc[1] += fold(tp);                                                                        \
        acc[2] += fold(dd);                                                                        \
    }                                                                                              \
    AVX2 static void residual_##SUFFIX(const T *restrict p, const T *restrict t, int64_t n,        \
                                       const double *shift, double *restrict acc)                  \
    {                                                                                              \
        const __m256d mp = _mm256_set1_pd(shift[0]), mt = _mm256_set1_pd(shift[1]);                \
        const __m256d gain = _mm256_set1_pd(shift[2]);                                             \
        __m256d rra = _mm256_setzero_pd(), rrb = rra;                                              \
        int64_t i = 0;                                                                             \
        for (; i + LANES <= n; i += LANES) {                                                       \
            const __m256d ra = SUB(MUL(gain, SUB(LOAD4(t + i), mt)), SUB(LOAD4(p + i), mp));       \
            const __m256d rb =                                                                     \
                SUB(MUL(gain, SUB(LOAD4(t + i + 4), mt)), SUB(LOAD4(p + i + 4), mp));              \
            rra = ADD(rra, MUL(ra, ra));                                                           \
            rrb = ADD(rrb, MUL(rb, rb));                                                           \
        }                                                                                          \
        double rr[LANES];                                                                          \
        _mm256_storeu_pd(rr, rra);                                                                 \
        _mm256_storeu_pd(rr + 4, rrb);                                                             \
        for (; i < n; i++)                                                                         \
            ONE_RESIDUAL(p[i], t[i], 0);                                                           \
        acc[0] += fold(rr);                                                                        \
    }

LOOPS_AVX2(f32_avx2, float, LOAD_F32)
LOOPS_AVX2(f64_avx2, double, LOAD_F64)
#endif

typedef void (*f32_loop)(const float *, const float *, int64_t, const double *, double *);
typedef void (*f64_loop)(const double *, const double *, int64_t, const double *, double *);

/* One pass's loop for samples read in place as float32 and for float64 ones. */
typedef struct {
    f32_loop f32;
    f64_loop f64;
} pass;

typedef struct {
    pass means, energies, residual;
} passes;

static const passes base_passes = {
    {means_f32_base, means_f64_base},
    {energies_f32_base, energies_f64_base},
    {residual_f32_base, residual_f64_base},
};

#ifdef TT_HAVE_AVX2_TARGET
static const passes avx2_passes = {
    {means_f32_avx2, means_f64_avx2},
    {energies_f32_avx2, energies_f64_avx2},
    {residual_f32_avx2, residual_f64_avx2},
};
#endif

/* Row r of a [R, T] view as a 1-D view over time. */
static tt_view row_of(const tt_view *v, int64_t r)
{
    tt_view row = *v;
    row.data = v->data + r * tt_step(v, 0);
    row.ndim = 1;
    row.shape[0] = v->shape[1];
    row.stride[0] = v->stride[1];
    return row;
}

/* One pass over a row pair (p and t: one dtype, one length), chunk by chunk. */
static void run_pass(const pass *loop, const tt_view *p, const tt_view *t, const double *shift,
                     double *acc)
{
    const int64_t n = p->shape[0];
    const int64_t size = (int64_t)tt_dtype_size(p->dtype);
    const int unit = tt_step(p, 0) == size && tt_step(t, 0) == size;
    const int f32 = unit && p->dtype == TT_F32, f64 = unit && p->dtype == TT_F64;
    double pb[TT_CHUNK], tb[TT_CHUNK];
    for (int64_t start = 0; start < n; start += TT_CHUNK) {
        const int64_t m = n - start < TT_CHUNK ? n - start : TT_CHUNK;
        if (f32) {
            loop->f32((const float *)p->data + start, (const float *)t->data + start, m, shift,
                      acc);
        } else if (f64) {
            loop->f64((const double *)p->data + start, (const double *)t->data + start, m, shift,
                      acc);
        } else {
            (void)tt_load_scores(p, start, m, 0, pb); /* (NaN propagates through the sums) */
            (void)tt_load_scores(t, start, m, 0, tb);
            loop->f64(pb, tb, m, shift, acc);
        }
    }
}

static tt_status check_all(const tt_view *out, const tt_view *preds, const tt_view *target,
                           int64_t group, double eps, tt_error *err)
{
    char got[96], want[96];
    tt_status st = tt_check_scores(preds, "preds", 2, err);
    if (st != TT_OK)
        return st;
    if (target->ndim != 2 || target->dtype != preds->dtype || target->shape[0] != preds->shape[0] ||
        target->shape[1] != preds->shape[1])
        return tt_fail(err, TT_EVALUE, "target",
                       "expected the dtype and shape of preds (%s), got %s",
                       tt_describe(preds, want, sizeof want), tt_describe(target, got, sizeof got));
    st = tt_check_cpu(target, "target", err);
    if (st != TT_OK)
        return st;
    const int64_t shape[2] = {preds->shape[0], out->ndim == 2 && out->shape[1] == 4 ? 4 : 3};
    st = tt_check_out(out, "out", TT_F64, 2, shape, err);
    if (st != TT_OK)
        return st;
    if (group < 1 || preds->shape[0] % group != 0)
        return tt_fail(err, TT_EVALUE, "group",
                       "expected a positive divisor of the %lld rows of preds, got %lld",
                       (long long)preds->shape[0], (long long)group);
    if (!(eps >= 0.0 && eps < INFINITY))
        return tt_fail(err, TT_EVALUE, "eps", "expected a finite number >= 0, got %g", eps);
    return TT_OK;
}

tt_status tt_signal_sums(const tt_view *out, const tt_view *preds, const tt_view *target,
                         int zero_mean, int64_t group, double eps, tt_error *err)
{
    tt_status st = check_all(out, preds, target, group, eps, err);
    if (st != TT_OK)
        return st;
    const passes *loops = &base_passes;
#ifdef TT_HAVE_AVX2_TARGET
    if (tt_simd_level() >= TT_SIMD_AVX2)
        loops = &avx2_passes;
#endif
    const int64_t rows = preds->shape[0], n = preds->shape[1], cols = out->shape[1];
    /* each row's means, kept for the residual pass that follows its group's energies */
    double *means = NULL;
    if (cols == 4 && rows > 0) {
        means = malloc((size_t)group * 2 * sizeof *means);
        if (!means)
            return tt_fail(err, TT_ENOMEM, "out", "could not allocate %lld means",
                           (long long)group * 2);
    }
    double *dst = (double *)out->data; /* contiguous (checked) */
    for (int64_t first = 0; first < rows; first += group) {
        double group_tt = 0.0, group_tp = 0.0;
        for (int64_t r = first; r < first + group; r++) {
            const tt_view p = row_of(preds, r), t = row_of(target, r);
            double shift[3] = {0.0, 0.0, 0.0}, acc[3] = {0.0, 0.0, 0.0};
            if (zero_mean && n > 0) {
                run_pass(&loops->means, &p, &t, shift, acc);
                shift[0] = acc[0] / (double)n;
                shift[1] = acc[1] / (double)n;
                acc[0] = acc[1] = 0.0;
            }
            run_pass(&loops->energies, &p, &t, shift, acc);
            for (int c = 0; c < 3; c++)
                dst[r * cols + c] = acc[c];
            group_tt += acc[0];
            group_tp += acc[1];
            if (means) {
                means[2 * (r - first)] = shift[0];
                means[2 * (r - first) + 1] = shift[1];
            }
        }
        if (!means)
            continue;
        const double gain = group_tt + eps > 0.0 ? (group_tp + eps) / (group_tt + eps) : 0.0;
        for (int64_t r = first; r < first + group; r++) {
            const tt_view p = row_of(preds, r), t = row_of(target, r);
            const double shift[3] = {means[2 * (r - first)], means[2 * (r - first) + 1], gain};
            double acc = 0.0;
            run_pass(&loops->residual, &p, &t, shift, &acc);
            dst[r * cols + 3] = acc;
        }
    }
    free(means);
    return TT_OK;
}
