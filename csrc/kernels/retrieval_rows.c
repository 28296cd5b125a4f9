/*
 * retrieval_rows.c: a batch of documents as the retrieval metrics store them, in one call: query
 * ids widened to int64, scores as float32, relevances as bool (binary metrics) or float32
 * (NDCG), with the update's value checks (no NaN score; a relevance of 0 or 1, or finite and
 * >= 0 when graded) made on the way. The workload: every retrieval update, mostly small batches
 * (tens to thousands of documents), where torch needed a reduction and a host read per check and
 * a copy per state (about ten dispatches); here one pass checks and one pass writes.
 *
 * Every document is checked before an output is written, so a bad batch leaves them untouched.
 */
#include "kernels/retrieval.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static tt_status check_args(const tt_view *query_out, const tt_view *score_out,
                            const tt_view *relevance_out, const tt_view *indexes,
                            const tt_view *preds, const tt_view *target, tt_error *err)
{
    char got[96];
    tt_status st = TT_OK;
    if (indexes->dtype == TT_BOOL)
        st =
            tt_fail(err, TT_ETYPE, "indexes", "expected an integer tensor [N] of query ids, got %s",
                    tt_describe(indexes, got, sizeof got));
    if (st == TT_OK)
        st = tt_check_labels(indexes, "indexes", 1, err);
    const int64_t shape[1] = {indexes->shape[0]};
    if (st == TT_OK)
        st = tt_check_scores(preds, "preds", 1, err);
    if (st == TT_OK && preds->shape[0] != shape[0])
        st = tt_fail(err, TT_EVALUE, "preds", "expected a tensor [%lld] of scores, got %s",
                     (long long)shape[0], tt_describe(preds, got, sizeof got));
    if (st == TT_OK && (target->ndim != 1 || target->shape[0] != shape[0]))
        st = tt_fail(err, TT_EVALUE, "target", "expected a tensor [%lld] of relevances, got %s",
                     (long long)shape[0], tt_describe(target, got, sizeof got));
    if (st == TT_OK)
        st = tt_check_cpu(target, "target", err);
    if (st == TT_OK)
        st = tt_check_out(query_out, "query_out", TT_I64, 1, shape, err);
    if (st == TT_OK)
        st = tt_check_out(score_out, "score_out", TT_F32, 1, shape, err);
    if (st == TT_OK && relevance_out->dtype != TT_BOOL && relevance_out->dtype != TT_F32)
        st = tt_fail(err, TT_ETYPE, "relevance_out",
                     "expected a bool or float32 tensor [%lld], got %s", (long long)shape[0],
                     tt_describe(relevance_out, got, sizeof got));
    if (st == TT_OK)
        st = tt_check_out(relevance_out, "relevance_out", relevance_out->dtype, 1, shape, err);
    return st;
}

/* The relevance at p as Python prints the element (`tensor.item()`): an integer as itself, a
 * float in its shortest round-trip form, with ".0" where that looks integral. */
static void format_relevance(char *buf, size_t size, const char *p, tt_dtype dtype)
{
    if (!tt_is_float(dtype)) {
        snprintf(buf, size, "%lld", (long long)tt_load_label(p, dtype));
        return;
    }
    const double v = tt_load_score(p, dtype);
    if (v != v) {
        snprintf(buf, size, "nan");
        return;
    }
    if (isinf(v) || (v == floor(v) && fabs(v) < 1e16)) {
        snprintf(buf, size, isinf(v) ? "%g" : "%.1f", v);
        return;
    }
    for (int digits = 1; digits <= 17; digits++) {
        snprintf(buf, size, "%.*g", digits, v);
        if (strtod(buf, NULL) == v)
            break;
    }
}

/* The first document (or -1) whose relevance is not 0 or 1 (binary) or not finite and >= 0. */
static int64_t first_bad_relevance(const tt_view *target, int graded)
{
    const int64_t n = target->shape[0], step = tt_step(target, 0);
    if (target->dtype == TT_BOOL)
        return -1;
    for (int64_t i = 0; i < n; i++) {
        const char *p = target->data + i * step;
        if (!tt_is_float(target->dtype)) {
            const int64_t v = tt_load_label(p, target->dtype);
            if (v < 0 || (!graded && v > 1))
                return i;
            continue;
        }
        const double v = tt_load_score(p, target->dtype);
        if (graded ? !(v >= 0.0) || isinf(v) : v != 0.0 && v != 1.0)
            return i;
    }
    return -1;
}

/* The usual batch (int64 query ids and relevances, float32 scores) without a dtype switch per
 * element: 1 when its rows were written, 0 when the batch is of another kind or holds a bad
 * value (the general path then names it). */
static int write_usual(const tt_view *query_out, const tt_view *score_out,
                       const tt_view *relevance_out, const tt_view *indexes, const tt_view *preds,
                       const tt_view *target)
{
    if (indexes->dtype != TT_I64 || preds->dtype != TT_F32 || target->dtype != TT_I64)
        return 0;
    const int64_t n = indexes->shape[0];
    const int64_t qs = indexes->stride[0], ps = preds->stride[0], ts = target->stride[0];
    const int64_t *q = (const int64_t *)indexes->data, *t = (const int64_t *)target->data;
    const float *p = (const float *)preds->data;
    const int64_t top = relevance_out->dtype == TT_F32 ? INT64_MAX : 1;
    int bad = 0;
    for (int64_t i = 0; i < n; i++) {
        const float s = p[i * ps];
        const int64_t r = t[i * ts];
        bad |= (s != s) | (r < 0) | (r > top);
    }
    if (bad)
        return 0;
    int64_t *qo = (int64_t *)query_out->data;
    float *so = (float *)score_out->data;
    for (int64_t i = 0; i < n; i++) {
        qo[i] = q[i * qs];
        so[i] = p[i * ps];
    }
    if (top == 1) {
        uint8_t *ro = (uint8_t *)relevance_out->data;
        for (int64_t i = 0; i < n; i++)
            ro[i] = t[i * ts] != 0;
    } else {
        float *ro = (float *)relevance_out->data;
        for (int64_t i = 0; i < n; i++)
            ro[i] = (float)t[i * ts];
    }
    return 1;
}

tt_status tt_retrieval_rows(const tt_view *query_out, const tt_view *score_out,
                            const tt_view *relevance_out, const tt_view *indexes,
                            const tt_view *preds, const tt_view *target, tt_error *err)
{
    tt_status st = check_args(query_out, score_out, relevance_out, indexes, preds, target, err);
    if (st != TT_OK || write_usual(query_out, score_out, relevance_out, indexes, preds, target))
        return st;
    const int64_t n = indexes->shape[0];
    const int64_t qs = tt_step(indexes, 0), ps = tt_step(preds, 0), ts = tt_step(target, 0);
    for (int64_t i = 0; i < n; i++) {
        const double s = tt_load_score(preds->data + i * ps, preds->dtype);
        if (s != s)
            return tt_fail(err, TT_EVALUE, "preds",
                           "NaN at document %lld (a NaN score has no rank)", (long long)i);
    }
    const int graded = relevance_out->dtype == TT_F32;
    const int64_t bad = first_bad_relevance(target, graded);
    if (bad >= 0) {
        char value[48];
        format_relevance(value, sizeof value, target->data + bad * ts, target->dtype);
        return tt_fail(err, TT_EVALUE, "target", "expected %s, got %s at document %lld",
                       graded ? "a finite relevance >= 0"
                              : "0 or 1 (binary relevance: `target` must contain `binary` values)",
                       value, (long long)bad);
    }
    int64_t *qo = (int64_t *)query_out->data;
    float *so = (float *)score_out->data;
    for (int64_t i = 0; i < n; i++) {
        qo[i] = tt_load_label(indexes->data + i * qs, indexes->dtype);
        so[i] = (float)tt_load_score(preds->data + i * ps, preds->dtype);
    }
    if (graded) {
        float *ro = (float *)relevance_out->data;
        const int exact = tt_is_float(target->dtype); /* integers straight to float, as torch */
        for (int64_t i = 0; i < n; i++) {
            const char *p = target->data + i * ts;
            ro[i] = exact ? (float)tt_load_score(p, target->dtype)
                          : (float)tt_load_label(p, target->dtype);
        }
    } else {
        uint8_t *ro = (uint8_t *)relevance_out->data;
        for (int64_t i = 0; i < n; i++)
            ro[i] = tt_load_score(target->data + i * ts, target->dtype) != 0.0;
    }
    return TT_OK;
}
