/*
 * confmat_threshold.c: binary and multilabel confusion matrices, out[label, target, prediction],
 * from thresholded float scores or from {0, 1} labels (confmat.h). The workload is the same
 * validation loop as confmat.c's, with L from 1 (binary) to hundreds of labels.
 *
 * Two paths, with the same results and errors. The element walk (any layout and dtype) counts
 * cell by cell in chunks and, on a bad element, runs again with sign -1 up to it, as confmat.c
 * does. The dense SSE2 path (contiguous float32 / float64 scores, common label dtypes) adds
 * per-column sums with no branch per element and hands a batch holding a bad element to the
 * walk, which finds and names it. With logit_threshold, one scan first decides whether the
 * batch holds probabilities or logits.
 */
#include "kernels/confmat.h"
#include "kernels/simd.h"

/* ---- the element walk ---------------------------------------------------------------------- */

typedef struct {
    const tt_view *preds, *target, *mask;
    const int64_t *ignore_index;
    double threshold;
    int64_t *out; /* [L, 2, 2] */
} threshold_job;

static int threshold_walk(const threshold_job *job, int64_t sign, tt_position stop,
                          tt_position *bad, tt_error *err)
{
    int64_t targets[TT_CHUNK], labels[TT_CHUNK];
    double scores[TT_CHUNK];
    uint8_t keep[TT_CHUNK];
    const tt_view *preds = job->preds;
    const int64_t rows = preds->shape[0];
    const int64_t cols = preds->ndim == 2 ? preds->shape[1] : 1;
    const int float_preds = tt_is_float(preds->dtype);
    const int has_ignore = job->ignore_index != NULL;
    const int64_t ignore = has_ignore ? *job->ignore_index : 0;
    const double threshold = job->threshold;

    for (int64_t start = 0; start < rows; start += TT_CHUNK) {
        const int64_t n = rows - start < TT_CHUNK ? rows - start : TT_CHUNK;
        tt_load_keep(job->mask, start, n, keep);
        for (int64_t col = 0; col < cols; col++) {
            tt_load_labels(job->target, start, n, col, targets);
            int64_t nan_at = -1;
            if (float_preds)
                nan_at = tt_load_scores(preds, start, n, col, scores);
            else
                tt_load_labels(preds, start, n, col, labels);
            int64_t *cell = job->out + col * 4;
            const int64_t visit = tt_rows_before(start, n, col, stop);
            for (int64_t i = 0; i < visit; i++) {
                const int64_t row = start + i;
                if (i == nan_at)
                    return tt_walk_stop(bad, (tt_position){row, col}, sign, err, "preds",
                                        "NaN at sample %lld, column %lld", (long long)row,
                                        (long long)col);
                const int64_t t = targets[i];
                if ((keep[i] == 0) | (has_ignore & (t == ignore)))
                    continue;
                const int64_t p = float_preds ? scores[i] > threshold : labels[i];
                const char *which = (uint64_t)t > 1 ? "target" : (uint64_t)p > 1 ? "preds" : NULL;
                if (which != NULL)
                    return tt_walk_stop(
                        bad, (tt_position){row, col}, sign, err, which,
                        "value %lld at sample %lld, column %lld is not a binary label (0 or 1)",
                        (long long)(which[0] == 't' ? t : p), (long long)row, (long long)col);
                cell[t * 2 + p] += sign;
            }
            if (visit < n)
                return 0; /* reached `stop` */
        }
    }
    return 0;
}

/* The dense path below adds per-column sums instead of one cell per element: over the kept
 * elements of a column, n (how many), t (sum of targets), p (sum of predictions) and tp (both 1),
 * so that cell (0, 0) gains n - t - p + tp, (0, 1) p - tp, (1, 0) t - tp and (1, 1) tp. It has
 * no branch per element: a bad element (NaN, a counted label outside {0, 1}) only sets a flag,
 * nothing is added, and the element walk above runs to find the first one and name it.
 * (That walk stays the path for other layouts and dtypes: a scalar sums loop over its chunk
 * buffers measured slower than its well-predicted branches.) */
typedef struct {
    int64_t n, t, p, tp;
} label_sums;

static void add_sums(int64_t *cell, const label_sums *s, int64_t sign)
{
    cell[0] += sign * (s->n - s->t - s->p + s->tp);
    cell[1] += sign * (s->p - s->tp);
    cell[2] += sign * (s->t - s->tp);
    cell[3] += sign * s->tp;
}

/* A tensor whose elements lie in memory order without gaps (row-major [N] or [N, L]). */
static int is_dense(const tt_view *v)
{
    if (v->ndim == 1)
        return v->shape[0] <= 1 || v->stride[0] == 1;
    return (v->shape[1] <= 1 || v->stride[1] == 1) &&
           (v->shape[0] <= 1 || v->stride[0] == v->shape[1]);
}

#if defined(__SSE2__)
#include <emmintrin.h>

/* ---- dense float32 / float64 preds with int64, int32, uint8 or bool targets, on SSE2 -------- */

/* The [N, L] elements are read in memory order, four per vector. Four rows fill L vectors, so
 * vector m of every group of four rows holds the same columns ((4m + k) mod L in lane k) and
 * the same rows of its group ((4m + k) / L): one accumulator per m, and a row's mask bit is
 * found in its lane by a compare with rowbit[m]. */
#define DENSE_MAX_LABELS 128

/* A lane's counts are packed in the four bytes of an int32 (n, t, p, tp); a lane gains at most
 * one per group, so they are unpacked into label_sums every 255 groups. */
#define PACKED_GROUPS 255

/* The largest float <= x, so that for every float s: s > x (in double) <=> s > below(x). */
static float float_at_or_below(double x)
{
    float f = (float)x;
    if ((double)f > x) {
        uint32_t bits;
        memcpy(&bits, &f, sizeof bits);
        if (f == 0.0f)
            bits = 0x80000001u; /* the negative number closest to zero */
        else if (f > 0.0f)
            bits -= 1; /* also +inf -> FLT_MAX */
        else
            bits += 1;
        memcpy(&f, &bits, sizeof f);
    }
    return f;
}

enum { DENSE_F32, DENSE_F64 };
enum { DENSE_I64, DENSE_I32, DENSE_U8 };

/* What a group scan reads. Passed by value: a local copy, which the compiler then knows the
 * stores into the accumulators cannot change. */
typedef struct {
    const char *preds, *target; /* dense [N, L] float32 / float64 scores, labels */
    const char *mask_data;      /* NULL: no mask */
    int64_t mask_step, labels;
    int has_ignore;
    __m128i ignore_lo, ignore_hi; /* ignore_index as two int32 halves */
    __m128 thr32;                 /* float_at_or_below(threshold) */
    __m128d thr64;
    const __m128i *rowbit; /* [labels] */
} dense_input;

/* Lanes of 4 labels at element e as two int32 halves (lo, hi) of their int64 value. */
#define LOAD_TARGET_I64(e)                                                                         \
    do {                                                                                           \
        const int64_t *t64 = (const int64_t *)in.target + (e);                                     \
        const __m128 a = _mm_castsi128_ps(_mm_loadu_si128((const __m128i *)t64));                  \
        const __m128 b = _mm_castsi128_ps(_mm_loadu_si128((const __m128i *)(t64 + 2)));            \
        lo = _mm_castps_si128(_mm_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0)));                      \
        hi = _mm_castps_si128(_mm_shuffle_ps(a, b, _MM_SHUFFLE(3, 1, 3, 1)));                      \
    } while (0)
#define LOAD_TARGET_I32(e)                                                                         \
    do {                                                                                           \
        lo = _mm_loadu_si128((const __m128i *)((const int32_t *)in.target + (e)));                 \
        hi = _mm_srai_epi32(lo, 31);                                                               \
    } while (0)
#define LOAD_TARGET_U8(e)                                                                          \
    do {                                                                                           \
        const __m128i zero = _mm_setzero_si128();                                                  \
        int32_t four;                                                                              \
        memcpy(&four, (const uint8_t *)in.target + (e), sizeof four);                              \
        lo = _mm_unpacklo_epi16(_mm_unpacklo_epi8(_mm_cvtsi32_si128(four), zero), zero);           \
        hi = zero;                                                                                 \
    } while (0)

/* Lanes (-1 / 0) of the 4 predictions at element e; NaN lanes are or-ed into `nan`. */
#define LOAD_PREDS_F32(e)                                                                          \
    do {                                                                                           \
        const __m128 s = _mm_loadu_ps((const float *)in.preds + (e));                              \
        nan = _mm_or_ps(nan, _mm_cmpunord_ps(s, s));                                               \
        pm = _mm_castps_si128(_mm_cmpgt_ps(s, in.thr32));                                          \
    } while (0)
#define LOAD_PREDS_F64(e)                                                                          \
    do {                                                                                           \
        const double *f64 = (const double *)in.preds + (e);                                        \
        const __m128d a = _mm_loadu_pd(f64), b = _mm_loadu_pd(f64 + 2);                            \
        nan = _mm_or_ps(nan,                                                                       \
                        _mm_castpd_ps(_mm_or_pd(_mm_cmpunord_pd(a, a), _mm_cmpunord_pd(b, b))));   \
        pm = _mm_castps_si128(_mm_shuffle_ps(_mm_castpd_ps(_mm_cmpgt_pd(a, in.thr64)),             \
                                             _mm_castpd_ps(_mm_cmpgt_pd(b, in.thr64)),             \
                                             _MM_SHUFFLE(2, 0, 2, 0)));                            \
    } while (0)

/* A group scan: groups g0..g1 of four rows add their packed counts into acc[m]; counted labels
 * outside {0, 1} are or-ed into *bad, NaN lanes into *nan. */
typedef void (*dense_scan)(dense_input in, int64_t g0, int64_t g1, __m128i *acc, __m128i *bad,
                           __m128 *nan);

/* The mask bits of group g's four rows (bit r: row r is kept), in every lane. */
static inline __m128i group_mask_bits(const dense_input *in, int64_t g)
{
    if (in->mask_data == NULL)
        return _mm_set1_epi32(-1);
    const char *mrow = in->mask_data + 4 * g * in->mask_step;
    const int64_t step = in->mask_step;
    return _mm_set1_epi32((mrow[0] != 0) | (mrow[step] != 0) << 1 | (mrow[2 * step] != 0) << 2 |
                          (mrow[3 * step] != 0) << 3);
}

/* acc plus the packed counts of vector m of a group (targets lo / hi, prediction lanes pm);
 * a counted target outside {0, 1} is or-ed into *bad. */
static inline __m128i count_vector(const dense_input *in, int64_t m, __m128i bits, __m128i lo,
                                   __m128i hi, __m128i pm, __m128i acc, __m128i *bad)
{
    const __m128i one = _mm_set1_epi32(1), p_field = _mm_set1_epi32(1 << 16);
    __m128i kept = _mm_set1_epi32(-1);
    if (in->mask_data != NULL)
        kept = _mm_cmpeq_epi32(_mm_and_si128(bits, in->rowbit[m]), in->rowbit[m]);
    if (in->has_ignore)
        kept = _mm_andnot_si128(
            _mm_and_si128(_mm_cmpeq_epi32(lo, in->ignore_lo), _mm_cmpeq_epi32(hi, in->ignore_hi)),
            kept);
    *bad = _mm_or_si128(*bad, _mm_and_si128(kept, _mm_or_si128(hi, _mm_andnot_si128(one, lo))));
    const __m128i t = _mm_and_si128(lo, one);
    const __m128i fields = _mm_or_si128(
        _mm_or_si128(one, _mm_slli_epi32(t, 8)),
        _mm_or_si128(_mm_and_si128(pm, p_field), _mm_slli_epi32(_mm_and_si128(t, pm), 24)));
    return _mm_add_epi32(acc, _mm_and_si128(kept, fields));
}

/* Defines `name`, the dense_scan of one (preds dtype, target dtype) pair. */
#define DEFINE_DENSE_SCAN(name, LOAD_PREDS, LOAD_TARGET)                                           \
    static void name(dense_input in, int64_t g0, int64_t g1, __m128i *acc, __m128i *bad_out,       \
                     __m128 *nan_out)                                                              \
    {                                                                                              \
        __m128i bad = *bad_out;                                                                    \
        __m128 nan = *nan_out;                                                                     \
        for (int64_t g = g0; g < g1; g++) {                                                        \
            const __m128i bits = group_mask_bits(&in, g);                                          \
            const int64_t e0 = 4 * g * in.labels;                                                  \
            for (int64_t m = 0; m < in.labels; m++) {                                              \
                __m128i lo, hi, pm;                                                                \
                LOAD_PREDS(e0 + 4 * m);                                                            \
                LOAD_TARGET(e0 + 4 * m);                                                           \
                acc[m] = count_vector(&in, m, bits, lo, hi, pm, acc[m], &bad);                     \
            }                                                                                      \
        }                                                                                          \
        *bad_out = bad;                                                                            \
        *nan_out = nan;                                                                            \
    }

DEFINE_DENSE_SCAN(dense_f32_i64, LOAD_PREDS_F32, LOAD_TARGET_I64)
DEFINE_DENSE_SCAN(dense_f32_i32, LOAD_PREDS_F32, LOAD_TARGET_I32)
DEFINE_DENSE_SCAN(dense_f32_u8, LOAD_PREDS_F32, LOAD_TARGET_U8)
DEFINE_DENSE_SCAN(dense_f64_i64, LOAD_PREDS_F64, LOAD_TARGET_I64)
DEFINE_DENSE_SCAN(dense_f64_i32, LOAD_PREDS_F64, LOAD_TARGET_I32)
DEFINE_DENSE_SCAN(dense_f64_u8, LOAD_PREDS_F64, LOAD_TARGET_U8)

/* The scan of each (preds, target) kind; bool targets read as uint8. */
static const dense_scan dense_scans[2][3] = {
    [DENSE_F32] = {[DENSE_I64] = dense_f32_i64,
                   [DENSE_I32] = dense_f32_i32,
                   [DENSE_U8] = dense_f32_u8},
    [DENSE_F64] = {[DENSE_I64] = dense_f64_i64,
                   [DENSE_I32] = dense_f64_i32,
                   [DENSE_U8] = dense_f64_u8},
};

/* Adds the counts of the rows of [row0, rows) (fewer than four) to sums, element by element.
 * Returns 1 when one of them is bad. */
static int dense_tail(const threshold_job *job, int64_t row0, label_sums *sums)
{
    const tt_view *preds = job->preds, *target = job->target, *mask = job->mask;
    const int64_t rows = preds->shape[0], labels = preds->ndim == 2 ? preds->shape[1] : 1;
    const size_t psize = tt_dtype_size(preds->dtype), tsize = tt_dtype_size(target->dtype);
    int bad = 0;
    for (int64_t r = row0; r < rows; r++) {
        const int keep = mask == NULL || *(const uint8_t *)(mask->data + r * tt_step(mask, 0)) != 0;
        for (int64_t l = 0; l < labels; l++) {
            const double s =
                tt_load_score(preds->data + (size_t)(r * labels + l) * psize, preds->dtype);
            const int64_t t =
                tt_load_label(target->data + (size_t)(r * labels + l) * tsize, target->dtype);
            const int64_t p = s > job->threshold;
            const int64_t kept = keep & !(job->ignore_index != NULL && t == *job->ignore_index);
            bad |= (s != s) | (int)(kept & ((uint64_t)t > 1)); /* 0 or 1 */
            sums[l].n += kept;
            sums[l].t += kept & t;
            sums[l].p += kept & p;
            sums[l].tp += kept & t & p;
        }
    }
    return bad;
}

/* Counts a dense job (is_dense preds and target, float32/float64 preds, int64/int32/uint8/bool
 * target, 1 <= L <= DENSE_MAX_LABELS) into `out`. Returns 0, or 1 with `out` untouched when an
 * element is bad. */
static int threshold_dense_sse2(const threshold_job *job)
{
    const tt_view *preds = job->preds, *target = job->target;
    const int64_t rows = preds->shape[0], labels = preds->ndim == 2 ? preds->shape[1] : 1;
    const int pkind = preds->dtype == TT_F32 ? DENSE_F32 : DENSE_F64;
    const int tkind = target->dtype == TT_I64   ? DENSE_I64
                      : target->dtype == TT_I32 ? DENSE_I32
                                                : DENSE_U8;
    const int has_ignore = job->ignore_index != NULL;
    const int64_t ignore = has_ignore ? *job->ignore_index : 0;
    const __m128i zero = _mm_setzero_si128();
    __m128i acc[DENSE_MAX_LABELS], rowbit[DENSE_MAX_LABELS];
    label_sums sums[DENSE_MAX_LABELS];
    for (int64_t m = 0; m < labels; m++) {
        int32_t bit[4];
        for (int k = 0; k < 4; k++)
            bit[k] = 1 << ((4 * m + k) / labels);
        rowbit[m] = _mm_loadu_si128((const __m128i *)bit);
        acc[m] = zero;
        sums[m] = (label_sums){0, 0, 0, 0};
    }
    const dense_input in = {
        .preds = preds->data,
        .target = target->data,
        .mask_data = job->mask != NULL ? job->mask->data : NULL,
        .mask_step = job->mask != NULL ? tt_step(job->mask, 0) : 0,
        .labels = labels,
        .has_ignore = has_ignore,
        .ignore_lo = _mm_set1_epi32((int32_t)(uint32_t)(uint64_t)ignore),
        .ignore_hi = _mm_set1_epi32((int32_t)(uint32_t)((uint64_t)ignore >> 32)),
        .thr32 = _mm_set1_ps(float_at_or_below(job->threshold)),
        .thr64 = _mm_set1_pd(job->threshold),
        .rowbit = rowbit,
    };
    const dense_scan scan = dense_scans[pkind][tkind];
    __m128i bad = zero;
    __m128 nan = _mm_setzero_ps();
    const int64_t groups = rows / 4;
    for (int64_t g0 = 0; g0 < groups; g0 += PACKED_GROUPS) {
        const int64_t g1 = groups - g0 < PACKED_GROUPS ? groups : g0 + PACKED_GROUPS;
        scan(in, g0, g1, acc, &bad, &nan);
        if (_mm_movemask_ps(nan) | (_mm_movemask_epi8(_mm_cmpeq_epi32(bad, zero)) ^ 0xffff))
            return 1;
        int64_t col = 0;
        for (int64_t m = 0; m < labels; m++) {
            uint32_t lane[4];
            _mm_storeu_si128((__m128i *)lane, acc[m]);
            acc[m] = zero;
            for (int k = 0; k < 4; k++) {
                sums[col].n += lane[k] & 0xff;
                sums[col].t += lane[k] >> 8 & 0xff;
                sums[col].p += lane[k] >> 16 & 0xff;
                sums[col].tp += lane[k] >> 24;
                col = col + 1 == labels ? 0 : col + 1;
            }
        }
    }
    if (dense_tail(job, groups * 4, sums))
        return 1;
    for (int64_t l = 0; l < labels; l++)
        add_sums(job->out + l * 4, &sums[l], +1);
    return 0;
}

static int dense_eligible(const threshold_job *job)
{
    const tt_view *preds = job->preds, *target = job->target;
    const int64_t labels = preds->ndim == 2 ? preds->shape[1] : 1;
    const tt_dtype t = target->dtype;
    return (preds->dtype == TT_F32 || preds->dtype == TT_F64) &&
           (t == TT_I64 || t == TT_I32 || t == TT_U8 || t == TT_BOOL) && labels >= 1 &&
           labels <= DENSE_MAX_LABELS && is_dense(preds) && is_dense(target) &&
           tt_simd_level() >= TT_SIMD_SSE2;
}
/* ---- probabilities or logits: does every element of float preds lie in [0, 1]? ------------ */

/* Dense float32: four elements per compare; NaN fails both ordered compares. Blocks of 1024
 * elements end the scan early on the first batch of logits. */
static int dense_probabilities_f32_sse2(const float *f, int64_t total)
{
    const __m128 zero = _mm_setzero_ps(), one = _mm_set1_ps(1.0f);
    int64_t i = 0;
    while (i + 4 <= total) {
        const int64_t end = total - i < 1024 ? i + ((total - i) & ~(int64_t)3) : i + 1024;
        __m128 ok = _mm_castsi128_ps(_mm_set1_epi32(-1));
        for (; i < end; i += 4) {
            const __m128 s = _mm_loadu_ps(f + i);
            ok = _mm_and_ps(ok, _mm_and_ps(_mm_cmpge_ps(s, zero), _mm_cmple_ps(s, one)));
        }
        if (_mm_movemask_ps(ok) != 0xf)
            return 0;
    }
    for (; i < total; i++)
        if (!(f[i] >= 0.0f && f[i] <= 1.0f))
            return 0;
    return 1;
}
#endif /* __SSE2__ */

/* 1 when every element of float preds ([N] or [N, L], any strides and float dtype) lies in
 * [0, 1], an empty tensor included; 0 when one lies outside or is NaN (torchmetrics' rule: such
 * a batch holds logits). All elements count, masked or ignored ones too. */
static int all_probabilities(const tt_view *preds)
{
    const int64_t rows = preds->shape[0], cols = preds->ndim == 2 ? preds->shape[1] : 1;
#if defined(__SSE2__)
    if (preds->dtype == TT_F32 && is_dense(preds) && tt_simd_level() >= TT_SIMD_SSE2)
        return dense_probabilities_f32_sse2((const float *)preds->data, rows * cols);
#endif
    if (preds->dtype == TT_F32 && is_dense(preds)) {
        const float *f = (const float *)preds->data;
        for (int64_t i = 0; i < rows * cols; i++)
            if (!(f[i] >= 0.0f && f[i] <= 1.0f))
                return 0;
        return 1;
    }
    double scores[TT_CHUNK];
    for (int64_t start = 0; start < rows; start += TT_CHUNK) {
        const int64_t n = rows - start < TT_CHUNK ? rows - start : TT_CHUNK;
        for (int64_t col = 0; col < cols; col++) {
            tt_load_scores(preds, start, n, col, scores);
            int ok = 1;
            for (int64_t i = 0; i < n; i++)
                ok &= (scores[i] >= 0.0) & (scores[i] <= 1.0);
            if (!ok)
                return 0;
        }
    }
    return 1;
}

tt_status tt_confmat_threshold(const tt_view *out, const tt_view *preds, const tt_view *target,
                               const tt_view *mask, const int64_t *ignore_index, double threshold,
                               const double *logit_threshold, tt_error *err)
{
    char got[96], want[96];
    if (preds->ndim != 1 && preds->ndim != 2)
        return tt_fail(err, TT_EVALUE, "preds", "expected a tensor [N] or [N, L], got %s",
                       tt_describe(preds, got, sizeof got));
    if (tt_check_cpu(preds, "preds", err) || tt_check_labels(target, "target", preds->ndim, err))
        return err->status;
    if (target->shape[0] != preds->shape[0] ||
        (preds->ndim == 2 && target->shape[1] != preds->shape[1]))
        return tt_fail(err, TT_EVALUE, "target", "expected the shape of preds (%s), got %s",
                       tt_describe(preds, want, sizeof want), tt_describe(target, got, sizeof got));
    if (threshold != threshold)
        return tt_fail(err, TT_EVALUE, "threshold", "expected a number, got NaN");
    if (logit_threshold != NULL && *logit_threshold != *logit_threshold)
        return tt_fail(err, TT_EVALUE, "logit_threshold", "expected a number, got NaN");
    const int64_t cols = preds->ndim == 2 ? preds->shape[1] : 1;
    const int64_t shape3[3] = {cols, 2, 2}, shape2[2] = {2, 2};
    if (preds->ndim == 1 && out->ndim == 2) {
        if (tt_check_out(out, "out", TT_I64, 2, shape2, err))
            return err->status;
    } else if (tt_check_out(out, "out", TT_I64, 3, shape3, err)) {
        return err->status;
    }
    if (tt_check_mask(mask, preds->shape[0], err))
        return err->status;
    /* chosen once for the whole call, before any path (the SSE2 one takes it by value) */
    if (logit_threshold != NULL && tt_is_float(preds->dtype) && !all_probabilities(preds))
        threshold = *logit_threshold;

    threshold_job job = {preds, target, mask, ignore_index, threshold, (int64_t *)out->data};
#if defined(__SSE2__)
    if (dense_eligible(&job) && !threshold_dense_sse2(&job))
        return TT_OK; /* else nothing was added */
#endif
    tt_position bad;
    if (!threshold_walk(&job, +1, TT_WALK_ALL, &bad, err))
        return TT_OK;
    threshold_walk(&job, -1, bad, &bad, err);
    return err->status;
}
