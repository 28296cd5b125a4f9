/*
 * lcs.c: ROUGE-L's longest common subsequence, for a batch of (prediction, reference) pairs of
 * token ids. The workload: thousands of pairs of tens to a few thousand tokens each; the
 * classic dynamic programme, O(m n) time per pair, kept to one row of the shorter sequence
 * (O(min(m, n)) memory, allocated once for the batch's longest such row).
 *
 * Every input is checked before anything is written; a failure leaves `out` untouched.
 */
#include "kernels/lcs.h"

#include <stdlib.h>

static tt_status check_tokens(const tt_view *v, const char *arg, tt_error *err)
{
    char got[96];
    if (v->dtype != TT_I64 || v->ndim != 1)
        return tt_fail(err, v->dtype != TT_I64 ? TT_ETYPE : TT_EVALUE, arg,
                       "expected int64 token ids [L], got %s", tt_describe(v, got, sizeof got));
    return tt_check_cpu(v, arg, err);
}

/* offsets int64 [pairs + 1], non-decreasing from 0 to at most `length`. */
static tt_status check_offsets(const tt_view *v, const char *arg, int64_t pairs, int64_t length,
                               tt_error *err)
{
    char got[96];
    if (v->dtype != TT_I64 || v->ndim != 1 || v->shape[0] != pairs + 1)
        return tt_fail(err, v->dtype != TT_I64 ? TT_ETYPE : TT_EVALUE, arg,
                       "expected int64 offsets [%lld], got %s", (long long)(pairs + 1),
                       tt_describe(v, got, sizeof got));
    tt_status st = tt_check_cpu(v, arg, err);
    if (st != TT_OK)
        return st;
    const int64_t *o = (const int64_t *)v->data, s = v->stride[0];
    int64_t previous = 0;
    for (int64_t p = 0; p <= pairs; p++) {
        const int64_t x = o[p * s];
        if ((p == 0 && x != 0) || x < previous || x > length)
            return tt_fail(err, TT_EVALUE, arg,
                           "expected offsets rising from 0 to at most %lld, got %lld at index %lld",
                           (long long)length, (long long)x, (long long)p);
        previous = x;
    }
    return TT_OK;
}

static int64_t offset(const tt_view *v, int64_t p)
{
    return ((const int64_t *)v->data)[p * v->stride[0]];
}

/* The LCS length of x (m tokens, stride xs) and y (n tokens, stride ys), n <= m, with `row`
 * holding cap + 1 entries (0 <= n <= cap: the caller sized it for the batch). */
static int64_t lcs_pair(const int64_t *x, int64_t xs, int64_t m, const int64_t *y, int64_t ys,
                        int64_t n, int64_t *row, int64_t cap)
{
    if (n < 1 || n > cap)
        return 0;
    for (int64_t j = 0; j <= n; j++)
        row[j] = 0;
    for (int64_t i = 0; i < m; i++) {
        const int64_t token = x[i * xs];
        int64_t diagonal = 0; /* row[j] of the previous i, before it was overwritten */
        for (int64_t j = 1; j <= n; j++) {
            const int64_t up = row[j];
            if (token == y[(j - 1) * ys])
                row[j] = diagonal + 1;
            else if (row[j - 1] > up)
                row[j] = row[j - 1];
            diagonal = up;
        }
    }
    return row[n];
}

tt_status tt_lcs(const tt_view *out, const tt_view *a, const tt_view *a_offsets, const tt_view *b,
                 const tt_view *b_offsets, tt_error *err)
{
    char got[96];
    if (out->ndim != 1)
        return tt_fail(err, TT_EVALUE, "out", "expected int64 [P], got %s",
                       tt_describe(out, got, sizeof got));
    const int64_t pairs = out->shape[0];
    tt_status st = tt_check_out(out, "out", TT_I64, 1, &pairs, err);
    if (st == TT_OK)
        st = check_tokens(a, "a", err);
    if (st == TT_OK)
        st = check_tokens(b, "b", err);
    if (st == TT_OK)
        st = check_offsets(a_offsets, "a_offsets", pairs, a->shape[0], err);
    if (st == TT_OK)
        st = check_offsets(b_offsets, "b_offsets", pairs, b->shape[0], err);
    if (st != TT_OK)
        return st;
    int64_t longest = 0;
    for (int64_t p = 0; p < pairs; p++) {
        const int64_t m = offset(a_offsets, p + 1) - offset(a_offsets, p);
        const int64_t n = offset(b_offsets, p + 1) - offset(b_offsets, p);
        const int64_t shorter = m < n ? m : n;
        longest = shorter > longest ? shorter : longest;
    }
    int64_t *row = malloc((size_t)(longest + 1) * sizeof *row);
    if (row == NULL)
        return tt_fail(err, TT_ENOMEM, "out", "cannot allocate a row of %lld tokens",
                       (long long)longest);
    int64_t *result = (int64_t *)out->data;
    const int64_t *ad = (const int64_t *)a->data, *bd = (const int64_t *)b->data;
    const int64_t as = a->stride[0], bs = b->stride[0];
    for (int64_t p = 0; p < pairs; p++) {
        const int64_t a0 = offset(a_offsets, p), m = offset(a_offsets, p + 1) - a0;
        const int64_t b0 = offset(b_offsets, p), n = offset(b_offsets, p + 1) - b0;
        if (m == 0 || n == 0)
            result[p] = 0;
        else if (n <= m)
            result[p] = lcs_pair(ad + a0 * as, as, m, bd + b0 * bs, bs, n, row, longest);
        else
            result[p] = lcs_pair(bd + b0 * bs, bs, n, ad + a0 * as, as, m, row, longest);
    }
    free(row);
    return TT_OK;
}
