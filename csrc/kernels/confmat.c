/*
 * confmat.c: confusion matrices from labels, from scores (argmax fused) and from thresholded
 * scores (binary, multilabel). The workload is a validation loop calling update once per batch:
 * N from tens to millions, C from 2 to thousands.
 *
 * Samples are walked in chunks: labels are converted to int64 once per chunk, predictions are
 * computed per chunk (argmax in a typed loop), then one tight loop validates and counts. A bad
 * sample stops the walk; the same walk then runs again with sign -1 up to that sample, so `out`
 * is restored without a scratch copy of a possibly large C x C matrix.
 */
#include "confmat.h"
#include "simd.h"

#include <stdio.h>

typedef struct {
    const tt_view *preds, *target, *mask;
    const int64_t *ignore_index;
    int64_t classes;
    int from_scores;
    int64_t *out;
} labels_job;

/* ---- argmax over rows of [n, C] scores ------------------------------------------------------ */

/* A row's running maximum is a chain of dependent compare-selects, so one row at a time runs at
 * the latency of that chain. ROWS_AT_ONCE rows are scanned together, column by column, so the
 * chains overlap (and the compiler can put the rows in vector lanes). A group that holds a NaN
 * is rescanned row by row to find the first NaN row. */
#define ROWS_AT_ONCE 8

#define ARGMAX_ONE_ROW(acc, type, convert, i)                                                  \
    do {                                                                                       \
        const char *row = base + (i) * row_step;                                               \
        acc best = (acc)convert(*(const type *)row);                                           \
        int64_t best_j = 0;                                                                    \
        int nan = best != best;                                                                \
        for (int64_t j = 1; j < classes; j++) {                                                \
            const acc v = (acc)convert(*(const type *)(row + j * col_step));                   \
            const int greater = v > best;                                                      \
            nan |= v != v;                                                                     \
            best = greater ? v : best;                                                         \
            best_j = greater ? j : best_j;                                                     \
        }                                                                                      \
        if (nan)                                                                               \
            return (i);                                                                        \
        dst[i] = best_j;                                                                       \
    } while (0)

#define ARGMAX_ROWS(acc, type, convert, first)                                                 \
    do {                                                                                       \
        int64_t i = (first);                                                                   \
        for (; i + ROWS_AT_ONCE <= n; i += ROWS_AT_ONCE) {                                     \
            const char *group = base + i * row_step;                                           \
            acc best[ROWS_AT_ONCE];                                                            \
            int64_t best_j[ROWS_AT_ONCE];                                                      \
            int nan = 0;                                                                       \
            for (int r = 0; r < ROWS_AT_ONCE; r++) {                                           \
                best[r] = (acc)convert(*(const type *)(group + r * row_step));                 \
                best_j[r] = 0;                                                                 \
                nan |= best[r] != best[r];                                                     \
            }                                                                                  \
            for (int64_t j = 1; j < classes; j++) {                                            \
                const char *column = group + j * col_step;                                     \
                for (int r = 0; r < ROWS_AT_ONCE; r++) {                                       \
                    const acc v = (acc)convert(*(const type *)(column + r * row_step));        \
                    const int greater = v > best[r];                                           \
                    nan |= v != v;                                                             \
                    best[r] = greater ? v : best[r];                                           \
                    best_j[r] = greater ? j : best_j[r];                                       \
                }                                                                              \
            }                                                                                  \
            if (nan) {                                                                         \
                for (int64_t k = i; k < i + ROWS_AT_ONCE; k++)                                 \
                    ARGMAX_ONE_ROW(acc, type, convert, k);                                     \
            }                                                                                  \
            for (int r = 0; r < ROWS_AT_ONCE; r++)                                             \
                dst[i + r] = best_j[r];                                                        \
        }                                                                                      \
        for (; i < n; i++)                                                                     \
            ARGMAX_ONE_ROW(acc, type, convert, i);                                             \
    } while (0)

#define IDENTITY(x) (x)

#if defined(__SSE2__)
#include <emmintrin.h>

/* float32 on SSE2 (every x86-64): four rows in the four lanes of a vector, so one compare and
 * two selects serve four rows. Returns how many leading rows it filled; it stops before a group
 * of four that holds a NaN, and before the last n % 4 rows, which the scalar scan finishes. */
static int64_t argmax_rows_f32_sse2(const char *base, int64_t n, int64_t classes, int64_t row_step,
                                    int64_t col_step, int64_t *dst)
{
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) {
        const char *r0 = base + i * row_step, *r1 = r0 + row_step, *r2 = r1 + row_step,
                   *r3 = r2 + row_step;
#define COLUMN(at)                                                                             \
    _mm_set_ps(*(const float *)(r3 + (at)), *(const float *)(r2 + (at)),                       \
               *(const float *)(r1 + (at)), *(const float *)(r0 + (at)))
        __m128 best = COLUMN(0);
        __m128i best_j = _mm_setzero_si128();
        __m128 nan = _mm_cmpunord_ps(best, best);
        for (int64_t j = 1; j < classes; j++) {
            const __m128 v = COLUMN(j * col_step);
            const __m128 greater = _mm_cmpgt_ps(v, best);
            const __m128i take = _mm_castps_si128(greater);
            nan = _mm_or_ps(nan, _mm_cmpunord_ps(v, v));
            best = _mm_or_ps(_mm_and_ps(greater, v), _mm_andnot_ps(greater, best));
            best_j = _mm_or_si128(_mm_and_si128(take, _mm_set1_epi32((int32_t)j)),
                                  _mm_andnot_si128(take, best_j));
        }
#undef COLUMN
        if (_mm_movemask_ps(nan))
            return i;
        int32_t lanes[4];
        _mm_storeu_si128((__m128i *)lanes, best_j);
        for (int r = 0; r < 4; r++)
            dst[i + r] = lanes[r];
    }
    return i;
}
#endif

#if defined(TT_HAVE_AVX2_TARGET)
#include <immintrin.h>

/* float32 on AVX2 (checked at run time): eight rows in the eight lanes, each column fetched by
 * one gather instead of lane-by-lane inserts. The same contract as the SSE2 scan: it stops
 * before a group of sixteen rows that holds a NaN and before the last n % 16 rows. The gather offsets
 * are int32: the caller checks that 15 * row_step fits. */
__attribute__((target("avx2"))) static int64_t
argmax_rows_f32_avx2(const char *base, int64_t n, int64_t classes, int64_t row_step,
                     int64_t col_step, int64_t *dst)
{
    const __m256i rows = _mm256_mullo_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7),
                                            _mm256_set1_epi32((int32_t)row_step));
    const int64_t half = 8 * row_step; /* the second group of eight */
    int64_t i = 0;
    /* two groups of eight per pass: their compare-blend chains are independent and overlap */
    for (; i + 16 <= n; i += 16) {
        const char *group = base + i * row_step;
        __m256 best0 = _mm256_i32gather_ps((const float *)group, rows, 1);
        __m256 best1 = _mm256_i32gather_ps((const float *)(group + half), rows, 1);
        __m256i best_j0 = _mm256_setzero_si256(), best_j1 = _mm256_setzero_si256();
        __m256 nan = _mm256_or_ps(_mm256_cmp_ps(best0, best0, _CMP_UNORD_Q),
                                  _mm256_cmp_ps(best1, best1, _CMP_UNORD_Q));
        for (int64_t j = 1; j < classes; j++) {
            const char *column = group + j * col_step;
            const __m256 v0 = _mm256_i32gather_ps((const float *)column, rows, 1);
            const __m256 v1 = _mm256_i32gather_ps((const float *)(column + half), rows, 1);
            const __m256i jj = _mm256_set1_epi32((int32_t)j);
            const __m256 greater0 = _mm256_cmp_ps(v0, best0, _CMP_GT_OQ);
            const __m256 greater1 = _mm256_cmp_ps(v1, best1, _CMP_GT_OQ);
            nan = _mm256_or_ps(nan, _mm256_cmp_ps(v0, v1, _CMP_UNORD_Q)); /* NaN in either */
            best0 = _mm256_blendv_ps(best0, v0, greater0);
            best1 = _mm256_blendv_ps(best1, v1, greater1);
            best_j0 = _mm256_blendv_epi8(best_j0, jj, _mm256_castps_si256(greater0));
            best_j1 = _mm256_blendv_epi8(best_j1, jj, _mm256_castps_si256(greater1));
        }
        if (_mm256_movemask_ps(nan))
            return i;
        _mm256_storeu_si256((__m256i *)(dst + i), _mm256_cvtepi32_epi64(_mm256_castsi256_si128(best_j0)));
        _mm256_storeu_si256((__m256i *)(dst + i + 4), _mm256_cvtepi32_epi64(_mm256_extracti128_si256(best_j0, 1)));
        _mm256_storeu_si256((__m256i *)(dst + i + 8), _mm256_cvtepi32_epi64(_mm256_castsi256_si128(best_j1)));
        _mm256_storeu_si256((__m256i *)(dst + i + 12), _mm256_cvtepi32_epi64(_mm256_extracti128_si256(best_j1, 1)));
    }
    return i;
}
#endif

/* dst[i] = argmax of row start+i, the first index on ties (as torch.argmax). Returns the chunk
 * offset of the first row holding a NaN (rows before it are filled), or -1. float16, bfloat16
 * and float32 compare exactly in float. */
static int64_t argmax_rows(const tt_view *s, int64_t start, int64_t n, int64_t *dst)
{
    const int64_t classes = s->shape[1];
    const int64_t row_step = tt_step(s, 0), col_step = tt_step(s, 1);
    const char *base = s->data + start * row_step;
    int64_t done = 0;
    switch (s->dtype) {
    case TT_F16: ARGMAX_ROWS(float, uint16_t, tt_half_to_float, 0); break;
    case TT_BF16: ARGMAX_ROWS(float, uint16_t, tt_bf16_to_float, 0); break;
    case TT_F32: {
        const tt_simd level = tt_simd_level();
        (void)level;
#if defined(TT_HAVE_AVX2_TARGET)
        if (level >= TT_SIMD_AVX2 && tt_simd_gather_is_fast() && classes <= INT32_MAX &&
            row_step <= INT32_MAX / 15 &&
            row_step >= -(INT32_MAX / 15))
            done = argmax_rows_f32_avx2(base, n, classes, row_step, col_step, dst);
        else
#endif
#if defined(__SSE2__)
        if (level >= TT_SIMD_SSE2 && classes <= INT32_MAX)
            done = argmax_rows_f32_sse2(base, n, classes, row_step, col_step, dst);
#endif
        ARGMAX_ROWS(float, float, IDENTITY, done);
        break;
    }
    case TT_F64: ARGMAX_ROWS(double, double, IDENTITY, 0); break;
    default: break;
    }
    return -1;
}

/* ---- the counting walk ---------------------------------------------------------------------- */

/* Adds `sign` to out[target, pred] for every kept sample before index `stop`. Returns -1, or the
 * index of the first bad sample (and fills err when sign > 0). */
static int64_t labels_walk(const labels_job *job, int64_t sign, int64_t stop, tt_error *err)
{
    int64_t targets[TT_CHUNK], preds[TT_CHUNK];
    uint8_t keep[TT_CHUNK];
    const int64_t classes = job->classes;
    const int64_t n_total = job->target->shape[0];
    const int has_ignore = job->ignore_index != NULL;
    const int64_t ignore = has_ignore ? *job->ignore_index : 0;

    for (int64_t start = 0; start < n_total && start < stop; start += TT_CHUNK) {
        int64_t n = n_total - start < TT_CHUNK ? n_total - start : TT_CHUNK;
        if (stop - start < n)
            n = stop - start;
        int64_t nan_row = -1;
        tt_load_labels(job->target, start, n, 0, targets);
        tt_load_keep(job->mask, start, n, keep);
        if (job->from_scores) {
            nan_row = argmax_rows(job->preds, start, n, preds);
            if (nan_row >= 0)
                n = nan_row;
        } else {
            tt_load_labels(job->preds, start, n, 0, preds);
        }
        for (int64_t i = 0; i < n; i++) {
            const int64_t t = targets[i], p = preds[i];
            /* bitwise, not ||: a branch on the random label would mispredict often */
            if ((keep[i] == 0) | (has_ignore & (t == ignore)))
                continue;
            if ((uint64_t)t >= (uint64_t)classes) {
                if (sign > 0)
                    tt_fail(err, TT_EVALUE, "target", "label %lld at index %lld is out of range [0, %lld)",
                            (long long)t, (long long)(start + i), (long long)classes);
                return start + i;
            }
            if ((uint64_t)p >= (uint64_t)classes) {
                if (sign > 0)
                    tt_fail(err, TT_EVALUE, "preds", "label %lld at index %lld is out of range [0, %lld)",
                            (long long)p, (long long)(start + i), (long long)classes);
                return start + i;
            }
            job->out[t * classes + p] += sign;
        }
        if (nan_row >= 0) {
            if (sign > 0)
                tt_fail(err, TT_EVALUE, "preds", "NaN in the scores of sample %lld",
                        (long long)(start + nan_row));
            return start + nan_row;
        }
    }
    return -1;
}

static tt_status labels_run(const labels_job *job, tt_error *err)
{
    int64_t bad = labels_walk(job, +1, INT64_MAX, err);
    if (bad < 0)
        return TT_OK;
    labels_walk(job, -1, bad, err); /* undo: the samples before `bad` were all valid */
    return err->status;
}

tt_status tt_confmat_labels(const tt_view *out, const tt_view *preds, const tt_view *target,
                            const tt_view *mask, const int64_t *ignore_index, tt_error *err)
{
    if (out->ndim != 2)
        return tt_fail(err, TT_EVALUE, "out", "expected an int64 [C, C] matrix, got %d-D", out->ndim);
    if (tt_check_square_out(out, out->shape[0], err) || tt_check_labels(preds, "preds", 1, err) ||
        tt_check_labels(target, "target", 1, err) ||
        tt_check_same_length(preds, "preds", target, err) ||
        tt_check_mask(mask, target->shape[0], err))
        return err->status;
    labels_job job = {preds, target, mask, ignore_index, out->shape[0], 0, (int64_t *)out->data};
    return labels_run(&job, err);
}

tt_status tt_confmat_scores(const tt_view *out, const tt_view *preds, const tt_view *target,
                            const tt_view *mask, const int64_t *ignore_index, tt_error *err)
{
    if (tt_check_scores(preds, "preds", 2, err))
        return err->status;
    const int64_t classes = preds->shape[1];
    if (classes == 0 && preds->shape[0] > 0)
        return tt_fail(err, TT_EVALUE, "preds", "expected at least one class column, got [%lld, 0]",
                       (long long)preds->shape[0]);
    if (tt_check_square_out(out, classes, err) || tt_check_labels(target, "target", 1, err) ||
        tt_check_same_length(preds, "preds", target, err) ||
        tt_check_mask(mask, target->shape[0], err))
        return err->status;
    labels_job job = {preds, target, mask, ignore_index, classes, 1, (int64_t *)out->data};
    return labels_run(&job, err);
}

/* ---- binary and multilabel ------------------------------------------------------------------ */

typedef struct {
    const tt_view *preds, *target, *mask;
    const int64_t *ignore_index;
    double threshold;
    int64_t *out; /* [L, 2, 2] */
} threshold_job;

static int threshold_walk(const threshold_job *job, int64_t sign, tt_position stop, tt_position *bad,
                          tt_error *err)
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
    return (v->shape[1] <= 1 || v->stride[1] == 1) && (v->shape[0] <= 1 || v->stride[0] == v->shape[1]);
}

#if defined(__SSE2__)

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

/* Lanes of 4 labels at element e as two int32 halves (lo, hi) of their int64 value. */
#define LOAD_TARGET_I64(e)                                                                     \
    do {                                                                                       \
        const __m128 a = _mm_castsi128_ps(_mm_loadu_si128((const __m128i *)(t64 + (e))));       \
        const __m128 b = _mm_castsi128_ps(_mm_loadu_si128((const __m128i *)(t64 + (e) + 2)));   \
        lo = _mm_castps_si128(_mm_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0)));                  \
        hi = _mm_castps_si128(_mm_shuffle_ps(a, b, _MM_SHUFFLE(3, 1, 3, 1)));                  \
    } while (0)
#define LOAD_TARGET_I32(e)                                                                     \
    do {                                                                                       \
        lo = _mm_loadu_si128((const __m128i *)(t32 + (e)));                                    \
        hi = _mm_srai_epi32(lo, 31);                                                           \
    } while (0)
#define LOAD_TARGET_U8(e)                                                                      \
    do {                                                                                       \
        int32_t four;                                                                          \
        memcpy(&four, t8 + (e), sizeof four);                                                  \
        lo = _mm_unpacklo_epi16(_mm_unpacklo_epi8(_mm_cvtsi32_si128(four), zero), zero);       \
        hi = zero;                                                                             \
    } while (0)

/* Lanes (-1 / 0) of the 4 predictions at element e; NaN lanes are or-ed into `nan`. */
#define LOAD_PREDS_F32(e)                                                                      \
    do {                                                                                       \
        const __m128 s = _mm_loadu_ps(f32 + (e));                                              \
        nan = _mm_or_ps(nan, _mm_cmpunord_ps(s, s));                                           \
        pm = _mm_castps_si128(_mm_cmpgt_ps(s, thr32));                                         \
    } while (0)
#define LOAD_PREDS_F64(e)                                                                      \
    do {                                                                                       \
        const __m128d a = _mm_loadu_pd(f64 + (e)), b = _mm_loadu_pd(f64 + (e) + 2);            \
        nan = _mm_or_ps(nan, _mm_castpd_ps(_mm_or_pd(_mm_cmpunord_pd(a, a), _mm_cmpunord_pd(b, b)))); \
        pm = _mm_castps_si128(_mm_shuffle_ps(_mm_castpd_ps(_mm_cmpgt_pd(a, thr64)),            \
                                             _mm_castpd_ps(_mm_cmpgt_pd(b, thr64)),            \
                                             _MM_SHUFFLE(2, 0, 2, 0)));                        \
    } while (0)

/* Groups g0..g1 of four rows: adds each vector's packed counts into acc[m]. */
#define DENSE_GROUPS(LOAD_PREDS, LOAD_TARGET)                                                  \
    do {                                                                                       \
        for (int64_t g = g0; g < g1; g++) {                                                    \
            __m128i bits = all;                                                                \
            if (mask_data != NULL) {                                                           \
                const char *mrow = mask_data + 4 * g * mask_step;                              \
                bits = _mm_set1_epi32((mrow[0] != 0) | (mrow[mask_step] != 0) << 1 |           \
                                      (mrow[2 * mask_step] != 0) << 2 |                        \
                                      (mrow[3 * mask_step] != 0) << 3);                        \
            }                                                                                  \
            const int64_t e0 = 4 * g * labels;                                                 \
            for (int64_t m = 0; m < labels; m++) {                                             \
                __m128i lo, hi, pm;                                                            \
                LOAD_PREDS(e0 + 4 * m);                                                        \
                LOAD_TARGET(e0 + 4 * m);                                                       \
                __m128i kept = all;                                                            \
                if (mask_data != NULL)                                                         \
                    kept = _mm_cmpeq_epi32(_mm_and_si128(bits, rowbit[m]), rowbit[m]);         \
                if (has_ignore)                                                                \
                    kept = _mm_andnot_si128(_mm_and_si128(_mm_cmpeq_epi32(lo, ignore_lo),      \
                                                          _mm_cmpeq_epi32(hi, ignore_hi)),     \
                                            kept);                                             \
                bad = _mm_or_si128(bad, _mm_and_si128(kept, _mm_or_si128(hi, _mm_andnot_si128(one, lo)))); \
                const __m128i t = _mm_and_si128(lo, one);                                      \
                const __m128i fields =                                                         \
                    _mm_or_si128(_mm_or_si128(one, _mm_slli_epi32(t, 8)),                      \
                                 _mm_or_si128(_mm_and_si128(pm, p_field),                      \
                                              _mm_slli_epi32(_mm_and_si128(t, pm), 24)));      \
                acc[m] = _mm_add_epi32(acc[m], _mm_and_si128(kept, fields));                   \
            }                                                                                  \
        }                                                                                      \
    } while (0)

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
            const double s = tt_load_score(preds->data + (size_t)(r * labels + l) * psize, preds->dtype);
            const int64_t t = tt_load_label(target->data + (size_t)(r * labels + l) * tsize, target->dtype);
            const int64_t p = s > job->threshold;
            const int64_t kept = keep & !(job->ignore_index != NULL && t == *job->ignore_index);
            bad |= (s != s) | (kept & ((uint64_t)t > 1));
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
    const int tkind = target->dtype == TT_I64 ? DENSE_I64 : target->dtype == TT_I32 ? DENSE_I32 : DENSE_U8;
    const float *f32 = (const float *)preds->data;
    const double *f64 = (const double *)preds->data;
    const int64_t *t64 = (const int64_t *)target->data;
    const int32_t *t32 = (const int32_t *)target->data;
    const uint8_t *t8 = (const uint8_t *)target->data;
    const char *mask_data = job->mask != NULL ? job->mask->data : NULL;
    const int64_t mask_step = job->mask != NULL ? tt_step(job->mask, 0) : 0;
    const int has_ignore = job->ignore_index != NULL;
    const int64_t ignore = has_ignore ? *job->ignore_index : 0;
    const __m128i ignore_lo = _mm_set1_epi32((int32_t)(uint32_t)(uint64_t)ignore);
    const __m128i ignore_hi = _mm_set1_epi32((int32_t)(uint32_t)((uint64_t)ignore >> 32));
    const __m128 thr32 = _mm_set1_ps(float_at_or_below(job->threshold));
    const __m128d thr64 = _mm_set1_pd(job->threshold);
    const __m128i zero = _mm_setzero_si128(), one = _mm_set1_epi32(1), all = _mm_set1_epi32(-1);
    const __m128i p_field = _mm_set1_epi32(1 << 16);

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
    __m128i bad = zero;
    __m128 nan = _mm_setzero_ps();
    const int64_t groups = rows / 4;
    for (int64_t g0 = 0; g0 < groups; g0 += PACKED_GROUPS) {
        const int64_t g1 = groups - g0 < PACKED_GROUPS ? groups : g0 + PACKED_GROUPS;
        switch (pkind * 3 + tkind) {
        case DENSE_F32 * 3 + DENSE_I64: DENSE_GROUPS(LOAD_PREDS_F32, LOAD_TARGET_I64); break;
        case DENSE_F32 * 3 + DENSE_I32: DENSE_GROUPS(LOAD_PREDS_F32, LOAD_TARGET_I32); break;
        case DENSE_F32 * 3 + DENSE_U8: DENSE_GROUPS(LOAD_PREDS_F32, LOAD_TARGET_U8); break;
        case DENSE_F64 * 3 + DENSE_I64: DENSE_GROUPS(LOAD_PREDS_F64, LOAD_TARGET_I64); break;
        case DENSE_F64 * 3 + DENSE_I32: DENSE_GROUPS(LOAD_PREDS_F64, LOAD_TARGET_I32); break;
        default: DENSE_GROUPS(LOAD_PREDS_F64, LOAD_TARGET_U8); break;
        }
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
    if (target->shape[0] != preds->shape[0] || (preds->ndim == 2 && target->shape[1] != preds->shape[1]))
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
