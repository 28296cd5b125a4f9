/*
 * curve_rows.c: the rows an exact curve metric's update appends to its cat state, for a batch
 * that needs no conversion. The workload: every update of an exact AUROC / ROC / PR curve, e.g.
 * 256 probabilities x 10 classes, where torch spends a min/max, a range test, a mask, two casts
 * and a copy, each with its own allocation and dispatch.
 *
 * The first pass reads the whole batch and decides: a NaN score (an ignored sample's too), a
 * counted label out of range, or (convert) a counted score outside [0, 1] (logits, to be
 * converted by sigmoid / softmax in torch, bit for bit as torch does) declines the batch: size
 * -1 and nothing written, and the caller takes its general path, which converts or raises with
 * its own messages. So does an ignore_index outside the target dtype's range (torch compares
 * such a value wrapped to that dtype). The second pass writes the kept rows.
 */
#include "kernels/curve_rows.h"

#include <string.h>

#include "kernels/exact_curve.h"

/* Whether `value` is a value of dtype d (an ignore_index torch compares without wrapping). */
static int in_dtype_range(int64_t value, tt_dtype d)
{
    switch (d) {
    case TT_BOOL: return value == 0 || value == 1;
    case TT_U8: return value >= 0 && value <= 255;
    case TT_I8: return value >= -128 && value <= 127;
    case TT_I16: return value >= -32768 && value <= 32767;
    case TT_I32: return value >= INT32_MIN && value <= INT32_MAX;
    default: return 1;
    }
}

static tt_status check_all(const tt_view *scores, const tt_view *labels, const tt_view *size,
                           const tt_view *preds, const tt_view *target, int64_t task, tt_error *err)
{
    char got[96], got_target[96];
    if (task < TT_EXACT_BINARY || task > TT_EXACT_MULTILABEL)
        return tt_fail(err, TT_EVALUE, "task",
                       "expected 0 (binary), 1 (multiclass) or 2 (multilabel), got %lld",
                       (long long)task);
    const int dims = task == TT_EXACT_BINARY ? 1 : 2, label_dims = task == 2 ? 2 : 1;
    tt_status st = tt_check_scores(preds, "preds", dims, err);
    if (st != TT_OK || (st = tt_check_labels(target, "target", label_dims, err)) != TT_OK)
        return st;
    if (target->shape[0] != preds->shape[0] ||
        (label_dims == 2 && target->shape[1] != preds->shape[1]))
        return tt_fail(err, TT_EVALUE, "target", "expected the rows of preds %s, got %s",
                       tt_describe(preds, got, sizeof got),
                       tt_describe(target, got_target, sizeof got_target));
    if ((st = tt_check_out(scores, "scores", TT_F32, dims, preds->shape, err)) != TT_OK)
        return st;
    const tt_dtype want = task == TT_EXACT_MULTICLASS ? labels->dtype : TT_U8;
    if (task == TT_EXACT_MULTICLASS &&
        (!tt_is_label(want) || want == TT_BOOL || !in_dtype_range(preds->shape[1] - 1, want)))
        return tt_fail(err, TT_ETYPE, "labels", "expected an integer dtype that holds %lld, got %s",
                       (long long)(preds->shape[1] - 1), tt_describe(labels, got, sizeof got));
    if ((st = tt_check_out(labels, "labels", want, label_dims, target->shape, err)) != TT_OK)
        return st;
    const int64_t one[1] = {1};
    return tt_check_out(size, "size", TT_I64, 1, one, err);
}

/* Stores class id / label v at element i of a contiguous label output of dtype d. */
static inline void store_label(char *out, int64_t i, tt_dtype d, int64_t v)
{
    switch (d) {
    case TT_I8: ((int8_t *)out)[i] = (int8_t)v; break;
    case TT_I16: ((int16_t *)out)[i] = (int16_t)v; break;
    case TT_I32: ((int32_t *)out)[i] = (int32_t)v; break;
    case TT_I64: ((int64_t *)out)[i] = v; break;
    default: ((uint8_t *)out)[i] = (uint8_t)v; break;
    }
}

/* Whether any of a row's k scores is NaN (*nan) or outside [0, 1] (*outside; NaN not).
 * The dtype is tested once per row: float32, the common one, is read directly. */
static inline void scan_row(const char *p, int64_t step, int64_t k, tt_dtype pd, int *nan,
                            int *outside)
{
    int n = 0, o = 0;
    if (pd == TT_F32 && step == (int64_t)sizeof(float)) { /* contiguous: vectorised */
        const float *q = (const float *)p;
        for (int64_t j = 0; j < k; j++) {
            const float v = q[j];
            n |= v != v;
            o |= (v < 0.0f) | (v > 1.0f);
        }
    } else if (pd == TT_F32) {
        for (int64_t j = 0; j < k; j++) {
            const float v = *(const float *)(p + j * step);
            n |= v != v;
            o |= (v < 0.0f) | (v > 1.0f); /* bitwise: the loop vectorises; NaN is n's */
        }
    } else {
        for (int64_t j = 0; j < k; j++) {
            const double v = tt_load_score(p + j * step, pd);
            n |= v != v;
            o |= (v < 0.0) | (v > 1.0);
        }
    }
    *nan |= n;
    *outside |= o;
}

/* Whether v's elements lie one after another in C order (no gap, no transposition). */
static int is_flat(const tt_view *v)
{
    if (v->ndim == 1)
        return v->stride[0] == 1 || v->shape[0] <= 1;
    return (v->stride[1] == 1 || v->shape[1] <= 1) &&
           (v->stride[0] == v->shape[1] || v->shape[0] <= 1);
}

/* 1 when each of the n contiguous labels at p lies in [0, hi) (an unsigned compare: negative
 * values wrap above hi), with the common dtypes read directly so that the loop vectorises. */
static int labels_in_range(const char *p, int64_t n, tt_dtype d, int64_t hi)
{
    int bad = 0;
    if (d == TT_U8 || d == TT_BOOL) {
        const uint8_t *q = (const uint8_t *)p;
        for (int64_t i = 0; i < n; i++)
            bad |= (uint64_t)q[i] >= (uint64_t)hi;
    } else if (d == TT_I64) {
        const int64_t *q = (const int64_t *)p;
        for (int64_t i = 0; i < n; i++)
            bad |= (uint64_t)q[i] >= (uint64_t)hi;
    } else {
        const int64_t size = (int64_t)tt_dtype_size(d);
        for (int64_t i = 0; i < n; i++)
            bad |= (uint64_t)tt_load_label(p + i * size, d) >= (uint64_t)hi;
    }
    return !bad;
}

/* Pass 1: 1 when the batch can be stored as it is (see the file comment). */
static int batch_fits(const tt_view *preds, const tt_view *target, int64_t task,
                      const int64_t *ignore_index, int convert)
{
    const int64_t n = preds->shape[0], k = task == TT_EXACT_BINARY ? 1 : preds->shape[1];
    const int64_t ps0 = tt_step(preds, 0), ps1 = task == TT_EXACT_BINARY ? 0 : tt_step(preds, 1);
    const int64_t ts0 = tt_step(target, 0), ts1 = task == 2 ? tt_step(target, 1) : 0;
    const int64_t hi = task == TT_EXACT_MULTICLASS ? k : 2;
    const tt_dtype pd = preds->dtype, td = target->dtype;
    const int ignoring = ignore_index != NULL;
    const int64_t ignored = ignoring ? *ignore_index : 0;
    int nan = 0, outside = 0;
    if (!ignoring && is_flat(preds) && is_flat(target)) { /* every element counts: flat scans */
        if (!labels_in_range(target->data, n * (task == 2 ? k : 1), td, hi))
            return 0;
        scan_row(preds->data, (int64_t)tt_dtype_size(pd), n * k, pd, &nan, &outside);
        return !nan && !(convert && outside);
    }
    for (int64_t i = 0; i < n; i++) {
        const char *p = preds->data + i * ps0, *t = target->data + i * ts0;
        int row_kept = 1;
        if (task != 2) {
            const int64_t label = tt_load_label(t, td);
            row_kept = !ignoring || label != ignored;
            if (row_kept && (label < 0 || label >= hi))
                return 0;
        } else {
            for (int64_t j = 0; j < k; j++) {
                const int64_t label = tt_load_label(t + j * ts1, td);
                if ((!ignoring || label != ignored) && (label < 0 || label >= 2))
                    return 0;
            }
        }
        /* multilabel decides on every element, binary and multiclass on the kept rows */
        int row_outside = 0;
        scan_row(p, ps1, k, pd, &nan, &row_outside);
        outside |= row_kept && row_outside;
    }
    return !nan && !(convert && outside);
}

/* Copies a row's k scores to float32 (float32 rows of contiguous scores by memcpy). */
static inline void copy_row(float *dst, const char *p, int64_t step, int64_t k, tt_dtype pd)
{
    if (pd == TT_F32 && (step == (int64_t)sizeof(float) || k == 1)) {
        if (k > 0) /* an empty tensor's data may be NULL, which memcpy must not get */
            memcpy(dst, p, (size_t)k * sizeof(float));
        return;
    }
    for (int64_t j = 0; j < k; j++)
        dst[j] = (float)tt_load_score(p + j * step, pd);
}

/* Pass 2: the kept rows into the outputs; returns how many. */
static int64_t write_rows(const tt_view *scores, const tt_view *labels, const tt_view *preds,
                          const tt_view *target, int64_t task, const int64_t *ignore_index)
{
    const int64_t n = preds->shape[0], k = task == TT_EXACT_BINARY ? 1 : preds->shape[1];
    const int64_t ps0 = tt_step(preds, 0), ps1 = task == TT_EXACT_BINARY ? 0 : tt_step(preds, 1);
    const int64_t ts0 = tt_step(target, 0), ts1 = task == 2 ? tt_step(target, 1) : 0;
    const tt_dtype pd = preds->dtype, td = target->dtype;
    float *s = (float *)scores->data;
    if (ignore_index == NULL && is_flat(preds) && is_flat(target)) { /* every row kept */
        const int64_t count = n * (task == 2 ? k : 1);
        copy_row(s, preds->data, (int64_t)tt_dtype_size(pd), n * k, pd);
        if (labels->dtype == TT_U8 && td == TT_I64) { /* narrowing of labels checked in range */
            const int64_t *q = (const int64_t *)target->data;
            for (int64_t i = 0; i < count; i++)
                ((uint8_t *)labels->data)[i] = (uint8_t)q[i];
        } else if (labels->dtype == TT_U8 && (td == TT_U8 || td == TT_BOOL)) {
            if (count > 0)
                memcpy(labels->data, target->data, (size_t)count);
        } else {
            const int64_t size = (int64_t)tt_dtype_size(td);
            for (int64_t i = 0; i < count; i++)
                store_label(labels->data, i, labels->dtype,
                            tt_load_label(target->data + i * size, td));
        }
        return n;
    }
    int64_t m = 0;
    for (int64_t i = 0; i < n; i++) {
        const char *p = preds->data + i * ps0, *t = target->data + i * ts0;
        if (task != 2) {
            const int64_t label = tt_load_label(t, td);
            if (ignore_index != NULL && label == *ignore_index)
                continue;
            store_label(labels->data, m, labels->dtype, label);
        }
        copy_row(s + m * k, p, ps1, k, pd);
        if (task == 2) {
            uint8_t *l = (uint8_t *)labels->data + m * k;
            for (int64_t j = 0; j < k; j++) {
                const int64_t label = tt_load_label(t + j * ts1, td);
                l[j] = (uint8_t)(ignore_index != NULL && label == *ignore_index ? 2 : label);
            }
        }
        m++;
    }
    return m;
}

tt_status tt_curve_rows(const tt_view *scores, const tt_view *labels, const tt_view *size,
                        const tt_view *preds, const tt_view *target, int64_t task,
                        const int64_t *ignore_index, int convert, tt_error *err)
{
    tt_status st = check_all(scores, labels, size, preds, target, task, err);
    if (st != TT_OK)
        return st;
    int64_t *written = (int64_t *)size->data;
    if ((ignore_index != NULL && !in_dtype_range(*ignore_index, target->dtype)) ||
        !batch_fits(preds, target, task, ignore_index, convert)) {
        *written = -1;
        return TT_OK;
    }
    *written = write_rows(scores, labels, preds, target, task, ignore_index);
    return TT_OK;
}
