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
    case TT_F32:
#if defined(__SSE2__)
        if (classes <= INT32_MAX)
            done = argmax_rows_f32_sse2(base, n, classes, row_step, col_step, dst);
#endif
        ARGMAX_ROWS(float, float, IDENTITY, done);
        break;
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

tt_status tt_confmat_threshold(const tt_view *out, const tt_view *preds, const tt_view *target,
                               const tt_view *mask, const int64_t *ignore_index, double threshold,
                               tt_error *err)
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

    threshold_job job = {preds, target, mask, ignore_index, threshold, (int64_t *)out->data};
    tt_position bad;
    if (!threshold_walk(&job, +1, TT_WALK_ALL, &bad, err))
        return TT_OK;
    threshold_walk(&job, -1, bad, &bad, err);
    return err->status;
}
