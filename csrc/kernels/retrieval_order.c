/*
 * retrieval_order.c: the documents in the order in which the retrieval metrics score them:
 * grouped by query (ascending id), each query by score (descending), documents of equal score by
 * relevance (ascending: a tie ranks its non-relevant documents first, so a constant score never
 * flatters a model, and the order depends on the documents alone, never on where they were
 * stored: any split across ranks and batches scores the same). 16-byte records (query key, score key, relevance), so no permutation is
 * gathered afterwards: first a stable least-significant-digit radix sort of the query keys, 8
 * bits a pass, a pass whose byte is the same for every record skipped (the high bytes of small
 * query ids), then a stable merge sort of each query by score, in cache for the usual query of
 * tens to thousands of documents. The workload: 10^6-10^8 documents at compute; O(N) per radix
 * pass, at most 8 passes, plus O(n log n) per query of n (torch's two stable sorts of 10^7
 * documents took several times longer).
 *
 * The outputs are written only after every document was read and checked.
 */
#include "kernels/retrieval.h"

#include <stdlib.h>

typedef struct {
    uint64_t query; /* the id with its sign bit flipped: unsigned order = signed order */
    uint32_t score; /* ordered so that ascending keys are descending scores */
    float relevance;
} record;

/* Ascending keys for descending float scores: the IEEE bits made monotone, then inverted. */
static uint32_t score_key(float s)
{
    uint32_t bits;
    if (s == 0.0f)
        s = 0.0f; /* -0.0 ranks with 0.0 */
    memcpy(&bits, &s, sizeof bits);
    const uint32_t ascending = (bits & 0x80000000u) ? ~bits : bits | 0x80000000u;
    return ~ascending;
}

static float score_of(uint32_t key)
{
    const uint32_t ascending = ~key;
    const uint32_t bits = (ascending & 0x80000000u) ? ascending & 0x7fffffffu : ~ascending;
    float s;
    memcpy(&s, &bits, sizeof s);
    return s;
}

static unsigned digit(const record *r, int pass)
{
    return (unsigned)(r->query >> (8 * pass)) & 0xffu;
}

/* Whether record p goes before record q: a higher score, or an equal score and a lower relevance. */
static int before(const record *p, const record *q)
{
    return p->score < q->score || (p->score == q->score && p->relevance < q->relevance);
}

/* Stable sort of one query's records by (score key, relevance) (a merge sort, insertion sort
 * below 32 records); tmp holds at least n / 2 records. */
static void sort_query(record *a, record *tmp, int64_t n)
{
    if (n <= 32) {
        for (int64_t i = 1; i < n; i++) {
            const record x = a[i];
            int64_t j = i;
            for (; j > 0 && before(&x, &a[j - 1]); j--)
                a[j] = a[j - 1];
            a[j] = x;
        }
        return;
    }
    const int64_t h = n / 2;
    sort_query(a, tmp, h);
    sort_query(a + h, tmp, n - h);
    if (!before(&a[h], &a[h - 1]))
        return;
    memcpy(tmp, a, (size_t)h * sizeof *a);
    int64_t i = 0, j = h, k = 0;
    while (i < h && j < n)
        a[k++] = before(&a[j], &tmp[i]) ? a[j++] : tmp[i++];
    while (i < h)
        a[k++] = tmp[i++];
}

/* One stable counting pass from src to dst; 0 (nothing moved) when every digit is equal. */
static int radix_pass(const record *src, record *dst, int64_t n, int pass)
{
    int64_t count[256] = {0};
    for (int64_t i = 0; i < n; i++)
        count[digit(&src[i], pass)]++;
    for (int b = 0; b < 256; b++)
        if (count[b] == n)
            return 0;
    int64_t at = 0;
    for (int b = 0; b < 256; b++) {
        const int64_t c = count[b];
        count[b] = at;
        at += c;
    }
    for (int64_t i = 0; i < n; i++)
        dst[count[digit(&src[i], pass)]++] = src[i];
    return 1;
}

static tt_status check_args(const tt_view *query_out, const tt_view *score_out,
                            const tt_view *relevance_out, const tt_view *query,
                            const tt_view *preds, const tt_view *target, tt_error *err)
{
    char got[96];
    if (query->dtype != TT_I64 || query->ndim != 1)
        return tt_fail(err, query->dtype != TT_I64 ? TT_ETYPE : TT_EVALUE, "query",
                       "expected an int64 tensor [N], got %s", tt_describe(query, got, sizeof got));
    tt_status st = tt_check_cpu(query, "query", err);
    const int64_t shape[1] = {query->shape[0]};
    if (st == TT_OK && (preds->dtype != TT_F32 || preds->ndim != 1 || preds->shape[0] != shape[0]))
        st = tt_fail(err, preds->dtype != TT_F32 ? TT_ETYPE : TT_EVALUE, "preds",
                     "expected a float32 tensor [%lld], got %s", (long long)shape[0],
                     tt_describe(preds, got, sizeof got));
    if (st == TT_OK)
        st = tt_check_cpu(preds, "preds", err);
    if (st == TT_OK && (target->ndim != 1 || target->shape[0] != shape[0]))
        st = tt_fail(err, TT_EVALUE, "target", "expected a tensor [%lld] of relevances, got %s",
                     (long long)shape[0], tt_describe(target, got, sizeof got));
    if (st == TT_OK)
        st = tt_check_cpu(target, "target", err);
    if (st == TT_OK)
        st = tt_check_out(query_out, "query_out", TT_I64, 1, shape, err);
    if (st == TT_OK)
        st = tt_check_out(score_out, "score_out", TT_F32, 1, shape, err);
    if (st == TT_OK)
        st = tt_check_out(relevance_out, "relevance_out", TT_F32, 1, shape, err);
    if (st == TT_OK && shape[0] >= (int64_t)UINT32_MAX)
        st = tt_fail(err, TT_EVALUE, "query", "expected fewer than 2^32 - 1 documents, got %lld",
                     (long long)shape[0]);
    return st;
}

tt_status tt_retrieval_order(const tt_view *query_out, const tt_view *score_out,
                             const tt_view *relevance_out, const tt_view *query,
                             const tt_view *preds, const tt_view *target, tt_error *err)
{
    tt_status st = check_args(query_out, score_out, relevance_out, query, preds, target, err);
    const int64_t n = query->shape[0];
    if (st != TT_OK || n == 0)
        return st;
    record *a = malloc((size_t)n * 2 * sizeof *a);
    if (a == NULL)
        return tt_fail(err, TT_ENOMEM, "query", "no memory to order %lld documents", (long long)n);
    record *b = a + n, *const block = a;
    const int64_t qs = tt_step(query, 0), ps = tt_step(preds, 0), ts = tt_step(target, 0);
    for (int64_t i = 0; i < n; i++) {
        const float s = *(const float *)(preds->data + i * ps);
        if (s != s) {
            free(block);
            return tt_fail(err, TT_EVALUE, "preds", "NaN at document %lld", (long long)i);
        }
        a[i].query = (uint64_t)*(const int64_t *)(query->data + i * qs) ^ 0x8000000000000000u;
        a[i].score = score_key(s);
        a[i].relevance = (float)tt_load_score(target->data + i * ts, target->dtype);
    }
    for (int pass = 0; pass < 8; pass++) /* group by query: a stable radix sort of the ids */
        if (radix_pass(a, b, n, pass)) {
            record *t = a;
            a = b;
            b = t;
        }
    for (int64_t start = 0; start < n;) { /* then each query by score, stably */
        int64_t end = start + 1;
        while (end < n && a[end].query == a[start].query)
            end++;
        sort_query(a + start, b, end - start);
        start = end;
    }
    int64_t *qo = (int64_t *)query_out->data;
    float *so = (float *)score_out->data, *ro = (float *)relevance_out->data;
    for (int64_t i = 0; i < n; i++) {
        qo[i] = (int64_t)(a[i].query ^ 0x8000000000000000u);
        so[i] = score_of(a[i].score);
        ro[i] = a[i].relevance;
    }
    free(block);
    return TT_OK;
}
