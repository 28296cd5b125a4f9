/*
 * retrieval.c: per query, the value of one retrieval metric over its documents, as torchmetrics
 * 1.9 defines it. The caller groups the documents by query and orders each group by score
 * (descending; ties in a fixed order, torchtally's: the documents' order in the state), so one
 * walk per query suffices. The workload: up to ~10^7 documents in ~10^5-10^6 queries, at
 * compute. O(N) time plus, for NDCG, a sort of each query's relevances (its ideal order).
 *
 * Every document is checked first (query order, score order, NaN, relevance values); `out` is
 * written only after that, so a bad input leaves it untouched.
 */
#include "kernels/retrieval.h"

#include <math.h>
#include <stdlib.h>

typedef struct {
    int64_t metric, top_k;
    int adaptive_k;
    const double *discount; /* 1 / log2(p + 2) for p < the longest query's length */
    double *scratch;        /* the longest query's length, for NDCG's ideal order */
} request;

static int by_value_descending(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x < y) - (x > y);
}

/* min(top_k or n, n): the documents looked at (top_k 0: all). */
static int64_t cutoff(int64_t top_k, int64_t n) { return top_k == 0 || top_k > n ? n : top_k; }

/* NDCG@k with torchmetrics' tie averaging: a group of equal scores shares its mean gain over
 * the discounts of the positions it spans; the ideal DCG ranks the relevances themselves. */
static double ndcg(const request *r, const double *s, const double *rel, int64_t n)
{
    const int64_t k = cutoff(r->top_k, n);
    double dcg = 0.0;
    for (int64_t g = 0; g < n && g < k;) {
        int64_t end = g;
        double gain = 0.0, discounts = 0.0;
        while (end < n && s[end] == s[g]) {
            gain += rel[end];
            if (end < k)
                discounts += r->discount[end];
            end++;
        }
        dcg += gain / (double)(end - g) * discounts;
        g = end;
    }
    for (int64_t j = 0; j < n; j++)
        r->scratch[j] = rel[j];
    qsort(r->scratch, (size_t)n, sizeof *r->scratch, by_value_descending);
    double ideal = 0.0;
    for (int64_t j = 0; j < k; j++)
        ideal += r->scratch[j] * r->discount[j];
    return ideal == 0.0 ? 0.0 : dcg / ideal;
}

/* The value of one query (documents ordered by score, descending); *empty: no positive (no
 * negative for fall-out). A document scored <= 0 is not counted as retrieved by MAP, MRR,
 * precision and recall (torchmetrics' rule). */
static double score_query(const request *r, const double *s, const double *rel, int64_t n,
                          int *empty)
{
    double positives = 0.0;
    for (int64_t j = 0; j < n; j++)
        positives += rel[j];
    const int64_t k = cutoff(r->top_k, n);
    int64_t hits = 0, found = 0;
    double sum = 0.0;
    *empty = positives == 0.0;
    switch (r->metric) {
    case TT_RETRIEVAL_MAP:
        for (int64_t j = 0; j < k; j++)
            if (rel[j] != 0.0 && s[j] > 0.0) {
                hits++;
                sum += (double)hits / (double)(j + 1);
            }
        return hits ? sum / (double)hits : 0.0;
    case TT_RETRIEVAL_MRR:
        for (int64_t j = 0; j < k; j++)
            if (rel[j] != 0.0 && s[j] > 0.0)
                return 1.0 / (double)(j + 1);
        return 0.0;
    case TT_RETRIEVAL_NDCG: return ndcg(r, s, rel, n);
    case TT_RETRIEVAL_PRECISION:
    case TT_RETRIEVAL_RECALL:
        if (*empty)
            return 0.0;
        for (int64_t j = 0; j < k; j++)
            hits += rel[j] != 0.0 && s[j] > 0.0;
        if (r->metric == TT_RETRIEVAL_RECALL)
            return (double)hits / positives;
        return (double)hits /
               (double)(r->top_k == 0 || (r->adaptive_k && r->top_k > n) ? n : r->top_k);
    case TT_RETRIEVAL_HIT_RATE:
        for (int64_t j = 0; j < k; j++)
            found |= rel[j] != 0.0;
        return (double)found;
    case TT_RETRIEVAL_FALL_OUT:
        *empty = positives == (double)n;
        if (*empty)
            return 0.0;
        for (int64_t j = 0; j < k; j++)
            hits += rel[j] == 0.0;
        return (double)hits / ((double)n - positives);
    default: { /* TT_RETRIEVAL_R_PRECISION */
        const int64_t relevant = (int64_t)positives;
        for (int64_t j = 0; j < relevant && j < n; j++)
            hits += rel[j] != 0.0;
        return relevant ? (double)hits / (double)relevant : 0.0;
    }
    }
}

/* Checks every document; *groups: the distinct queries, *longest: the longest query. */
static tt_status check_documents(const tt_view *query, const tt_view *preds, const tt_view *target,
                                 int binary, int64_t *groups, int64_t *longest, tt_error *err)
{
    const int64_t n = query->shape[0], qs = tt_step(query, 0), ps = tt_step(preds, 0),
                  ts = tt_step(target, 0);
    int64_t count = 0, start = 0, most = 0, previous_q = 0;
    double previous_s = 0.0;
    for (int64_t i = 0; i < n; i++) {
        const int64_t q = *(const int64_t *)(query->data + i * qs);
        const double s = tt_load_score(preds->data + i * ps, preds->dtype);
        const double y = tt_load_score(target->data + i * ts, target->dtype);
        if (s != s)
            return tt_fail(err, TT_EVALUE, "preds", "NaN at document %lld", (long long)i);
        if (!(y >= 0.0) || isinf(y) || (binary && y != 0.0 && y != 1.0))
            return tt_fail(err, TT_EVALUE, "target", "expected %s, got %g at document %lld",
                           binary ? "0 or 1" : "a finite relevance >= 0", y, (long long)i);
        if (i == 0 || q != previous_q) {
            if (i > 0 && q < previous_q)
                return tt_fail(err, TT_EVALUE, "query",
                               "expected non-decreasing query ids, got %lld after %lld at "
                               "document %lld",
                               (long long)q, (long long)previous_q, (long long)i);
            if (i - start > most)
                most = i - start;
            start = i;
            count++;
        } else if (s > previous_s) {
            return tt_fail(err, TT_EVALUE, "preds",
                           "expected scores non-increasing within a query, got %g after %g at "
                           "document %lld",
                           s, previous_s, (long long)i);
        }
        previous_q = q;
        previous_s = s;
    }
    if (n - start > most)
        most = n - start;
    *groups = count;
    *longest = most;
    return TT_OK;
}

tt_status tt_retrieval_scores(const tt_view *out, const tt_view *query, const tt_view *preds,
                              const tt_view *target, int64_t metric, int64_t top_k, int adaptive_k,
                              tt_error *err)
{
    char got[96];
    if (out->ndim != 2 || out->shape[1] != 2)
        return tt_fail(err, out->dtype != TT_F64 ? TT_ETYPE : TT_EVALUE, "out",
                       "expected a float64 tensor [Q, 2], got %s",
                       tt_describe(out, got, sizeof got));
    const int64_t out_shape[2] = {out->shape[0], 2};
    tt_status st = tt_check_out(out, "out", TT_F64, 2, out_shape, err);
    if (st == TT_OK && (query->dtype != TT_I64 || query->ndim != 1))
        st = tt_fail(err, query->dtype != TT_I64 ? TT_ETYPE : TT_EVALUE, "query",
                     "expected an int64 tensor [N], got %s", tt_describe(query, got, sizeof got));
    if (st == TT_OK)
        st = tt_check_cpu(query, "query", err);
    if (st == TT_OK)
        st = tt_check_scores(preds, "preds", 1, err);
    if (st == TT_OK && target->ndim != 1)
        st = tt_fail(err, TT_EVALUE, "target", "expected a 1-D tensor of relevances, got %s",
                     tt_describe(target, got, sizeof got));
    if (st == TT_OK)
        st = tt_check_cpu(target, "target", err);
    if (st != TT_OK)
        return st;
    const int64_t n = query->shape[0];
    if (preds->shape[0] != n || target->shape[0] != n)
        return tt_fail(err, TT_EVALUE, preds->shape[0] != n ? "preds" : "target",
                       "expected %lld documents (as query), got %lld", (long long)n,
                       (long long)(preds->shape[0] != n ? preds->shape[0] : target->shape[0]));
    if (metric < 0 || metric >= TT_RETRIEVAL_METRICS)
        return tt_fail(err, TT_EVALUE, "metric", "expected 0..%d, got %lld",
                       TT_RETRIEVAL_METRICS - 1, (long long)metric);
    if (top_k < 0)
        return tt_fail(err, TT_EVALUE, "top_k", "expected >= 0 (0: every document), got %lld",
                       (long long)top_k);
    int64_t groups = 0, longest = 0;
    st = check_documents(query, preds, target, metric != TT_RETRIEVAL_NDCG, &groups, &longest, err);
    if (st != TT_OK)
        return st;
    if (groups != out->shape[0])
        return tt_fail(err, TT_EVALUE, "out", "expected [%lld, 2] (one row per query), got %s",
                       (long long)groups, tt_describe(out, got, sizeof got));
    if (n == 0 || longest == 0)
        return TT_OK;
    /* s, rel, discount, scratch: four arrays of the longest query's length */
    double *buffer = malloc((size_t)longest * 4 * sizeof *buffer);
    if (buffer == NULL)
        return tt_fail(err, TT_ENOMEM, "query", "no memory for a query of %lld documents",
                       (long long)longest);
    double *s = buffer, *rel = buffer + longest, *discount = buffer + 2 * longest;
    for (int64_t j = 0; j < longest; j++)
        discount[j] = 1.0 / log2((double)j + 2.0);
    const request r = {metric, top_k, adaptive_k, discount, buffer + 3 * longest};
    const int64_t qs = tt_step(query, 0), ps = tt_step(preds, 0), ts = tt_step(target, 0);
    double *o = (double *)out->data;
    for (int64_t i = 0, row = 0; i < n; row++) {
        const int64_t q = *(const int64_t *)(query->data + i * qs);
        int64_t m = 0;
        for (; i < n && *(const int64_t *)(query->data + i * qs) == q; i++, m++) {
            s[m] = tt_load_score(preds->data + i * ps, preds->dtype);
            rel[m] = tt_load_score(target->data + i * ts, target->dtype);
        }
        int empty = 0;
        o[2 * row] = score_query(&r, s, rel, m, &empty);
        o[2 * row + 1] = empty ? 1.0 : 0.0;
    }
    free(buffer);
    return TT_OK;
}
