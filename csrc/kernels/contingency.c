/*
 * contingency.c: counts a batch of (pred, target) label pairs into deduplicated, sorted rows and
 * adds them to the rows held so far, in one call (the update of every clustering label metric,
 * and the merge of ranks' tables at sync). torch needs three torch.unique calls (each a sort)
 * and an index_add per batch; here two passes over the labels (their ranges, then the counts)
 * and a walk over the distinct keys, through key_slots.h's dense or hashed layout.
 */
#include "kernels/contingency.h"

#include <stdlib.h>

#include "kernels/key_slots.h"

enum { PRED, TARGET, COUNT };

/* The table's rows, chunk by chunk: its three columns as int64. */
static void load_rows(const tt_view *table, int64_t start, int64_t n, int64_t *col[3])
{
    for (int c = 0; c < 3; c++)
        tt_load_labels(table, start, n, c, col[c]);
}

static tt_status check_all(const tt_view *out, const tt_view *size, const tt_view *table,
                           const tt_view *preds, const tt_view *target, tt_error *err)
{
    char got[96];
    static const int64_t one[1] = {1};
    tt_status st = tt_check_labels(preds, "preds", 1, err);
    if (st == TT_OK)
        st = tt_check_labels(target, "target", 1, err);
    if (st == TT_OK && target->shape[0] != preds->shape[0])
        st = tt_fail(err, TT_EVALUE, "target", "expected %lld labels (as preds), got %lld",
                     (long long)preds->shape[0], (long long)target->shape[0]);
    if (st == TT_OK && table) {
        if (table->dtype != TT_I64 || table->ndim != 2 || table->shape[1] != 3)
            st = tt_fail(err, table->dtype != TT_I64 ? TT_ETYPE : TT_EVALUE, "table",
                         "expected int64 rows [K, 3] (pred, target, count), got %s",
                         tt_describe(table, got, sizeof got));
        else
            st = tt_check_cpu(table, "table", err);
    }
    if (st == TT_OK)
        st = tt_check_out(size, "size", TT_I64, 1, one, err);
    if (st != TT_OK)
        return st;
    const int64_t rows = (table ? table->shape[0] : 0) + preds->shape[0];
    if (out->dtype != TT_I64 || out->ndim != 2 || out->shape[1] != 3 || out->shape[0] < rows)
        return tt_fail(err, out->dtype != TT_I64 ? TT_ETYPE : TT_EVALUE, "out",
                       "expected int64 [M, 3] with M >= %lld (table rows + samples), got %s",
                       (long long)rows, tt_describe(out, got, sizeof got));
    const int64_t shape[2] = {out->shape[0], 3};
    return tt_check_out(out, "out", TT_I64, 2, shape, err);
}

typedef struct {
    int64_t amin, amax, bmin, bmax;
} key_box;

static void widen(key_box *box, int64_t a, int64_t b)
{
    box->amin = a < box->amin ? a : box->amin;
    box->amax = a > box->amax ? a : box->amax;
    box->bmin = b < box->bmin ? b : box->bmin;
    box->bmax = b > box->bmax ? b : box->bmax;
}

/* The keys' ranges, and the table's counts checked (>= 1). */
static tt_status scan(const tt_view *table, const tt_view *preds, const tt_view *target,
                      key_box *box, tt_error *err)
{
    int64_t total = preds->shape[0]; /* every key's count is at most this: checked to fit */
    int64_t a[TT_CHUNK], b[TT_CHUNK], c[TT_CHUNK];
    int64_t *col[3] = {a, b, c};
    const int64_t k = table ? table->shape[0] : 0, n = preds->shape[0];
    for (int64_t start = 0; start < k; start += TT_CHUNK) {
        const int64_t m = k - start < TT_CHUNK ? k - start : TT_CHUNK;
        load_rows(table, start, m, col);
        for (int64_t i = 0; i < m; i++) {
            if (c[i] < 1)
                return tt_fail(err, TT_EVALUE, "table",
                               "expected counts >= 1, got %lld in row %lld", (long long)c[i],
                               (long long)(start + i));
            if (__builtin_add_overflow(total, c[i], &total))
                return tt_fail(err, TT_EVALUE, "table", "expected counts whose sums fit int64");
            widen(box, a[i], b[i]);
        }
    }
    for (int64_t start = 0; start < n; start += TT_CHUNK) {
        const int64_t m = n - start < TT_CHUNK ? n - start : TT_CHUNK;
        tt_load_labels(preds, start, m, 0, a);
        tt_load_labels(target, start, m, 0, b);
        for (int64_t i = 0; i < m; i++)
            widen(box, a[i], b[i]);
    }
    return TT_OK;
}

/* counts[slot] of every key (scan checked that the total fits int64). */
static void count(tt_key_slots *slots, int64_t *counts, const tt_view *table, const tt_view *preds,
                  const tt_view *target)
{
    int64_t a[TT_CHUNK], b[TT_CHUNK], c[TT_CHUNK];
    int64_t *col[3] = {a, b, c};
    const int64_t k = table ? table->shape[0] : 0, n = preds->shape[0];
    for (int64_t start = 0; start < k; start += TT_CHUNK) {
        const int64_t m = k - start < TT_CHUNK ? k - start : TT_CHUNK;
        load_rows(table, start, m, col);
        for (int64_t i = 0; i < m; i++)
            counts[tt_key_slot(slots, a[i], b[i])] += c[i];
    }
    for (int64_t start = 0; start < n; start += TT_CHUNK) {
        const int64_t m = n - start < TT_CHUNK ? n - start : TT_CHUNK;
        tt_load_labels(preds, start, m, 0, a);
        tt_load_labels(target, start, m, 0, b);
        for (int64_t i = 0; i < m; i++)
            counts[tt_key_slot(slots, a[i], b[i])]++;
    }
}

tt_status tt_contingency_rows(const tt_view *out, const tt_view *size, const tt_view *table,
                              const tt_view *preds, const tt_view *target, tt_error *err)
{
    tt_status st = check_all(out, size, table, preds, target, err);
    if (st != TT_OK)
        return st;
    const int64_t keys = (table ? table->shape[0] : 0) + preds->shape[0];
    int64_t *dst = (int64_t *)out->data;
    if (keys == 0) {
        *(int64_t *)size->data = 0;
        return TT_OK;
    }
    key_box box = {INT64_MAX, INT64_MIN, INT64_MAX, INT64_MIN};
    st = scan(table, preds, target, &box, err);
    if (st != TT_OK)
        return st;
    tt_key_slots slots;
    st = tt_key_slots_init(&slots, keys, box.amin, box.amax, box.bmin, box.bmax, err);
    if (st != TT_OK)
        return st;
    int64_t *counts = calloc((size_t)slots.slots, sizeof *counts);
    int64_t *order = malloc((size_t)keys * sizeof *order);
    int64_t distinct = -1;
    if (counts == NULL || order == NULL) {
        st = tt_fail(err, TT_ENOMEM, "out", "out of memory for %lld keys", (long long)keys);
        goto done;
    }
    count(&slots, counts, table, preds, target);
    distinct = tt_key_slots_sorted(&slots, order);
    if (distinct < 0) {
        st = tt_fail(err, TT_ENOMEM, "out", "out of memory sorting %lld keys", (long long)keys);
        goto done;
    }
    if (distinct > keys) /* never: the slots in use are at most the keys (bounds order and out) */
        distinct = keys;
    for (int64_t r = 0; r < distinct; r++) {
        tt_key_of(&slots, order[r], dst + 3 * r + PRED, dst + 3 * r + TARGET);
        dst[3 * r + COUNT] = counts[order[r]];
    }
    *(int64_t *)size->data = distinct;
done:
    free(counts);
    free(order);
    tt_key_slots_free(&slots);
    return st;
}
