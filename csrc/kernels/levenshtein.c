/*
 * levenshtein.c: the edit distance of every pair of a batch of token sequences, in one call.
 * The workload: an update of a word or character error rate, thousands of sentence pairs of
 * tens (words) to hundreds (characters) of tokens, ids assigned in Python so that equal tokens
 * have equal ids within a pair.
 *
 * Per pair: the common prefix and suffix are dropped (matching equal end tokens is optimal for
 * any non-negative costs), then the textbook dynamic programme runs over the rest, one row at a
 * time: O(m n) time and O(min(m, n)) memory (a row as long as the shorter sequence, which is
 * also copied into an int64 buffer so that the inner loop reads one dtype). A substitution
 * never costs more than a deletion plus an insertion, so a cost above 2 is taken as 2: the
 * distance is the same and no sum can overflow (a distance is at most m + n).
 *
 * The offsets are checked before any pair is scored, and the distances go to a private buffer
 * copied to `out` at the end, so a failure leaves `out` untouched.
 */
#include "kernels/levenshtein.h"

#include <stdlib.h>

static inline int64_t load_token(const char *data, tt_dtype dtype, int64_t i)
{
    if (dtype == TT_I32) {
        int32_t v;
        memcpy(&v, data + i * (int64_t)sizeof v, sizeof v);
        return v;
    }
    int64_t v;
    memcpy(&v, data + i * (int64_t)sizeof v, sizeof v);
    return v;
}

/* The distance of a[0..m) against b[0..n), n <= m, b already in `shorter`; `row` holds n + 1. */
static int64_t distance(const char *data, tt_dtype dtype, int64_t a, int64_t m,
                        const int64_t *shorter, int64_t n, int64_t cost, int64_t *row)
{
    if (n <= 0 || m <= 0) /* the caller's pairs have both sides non-empty; kept for the analyser */
        return (m > 0 ? m : 0) + (n > 0 ? n : 0);
    for (int64_t j = 0; j <= n; j++)
        row[j] = j;
    for (int64_t i = 1; i <= m; i++) {
        const int64_t token = load_token(data, dtype, a + i - 1);
        int64_t diagonal = row[0], left = i;
        row[0] = i;
        for (int64_t j = 1; j <= n; j++) {
            const int64_t up = row[j];
            int64_t best = diagonal + (token == shorter[j - 1] ? 0 : cost);
            if (up + 1 < best)
                best = up + 1;
            if (left + 1 < best)
                best = left + 1;
            row[j] = best;
            left = best;
            diagonal = up;
        }
    }
    return row[n];
}

static tt_status check_inputs(const tt_view *out, const tt_view *tokens, const tt_view *offsets,
                              int64_t substitution_cost, int64_t *pairs, tt_error *err)
{
    char got[96];
    if (tokens->dtype != TT_I32 && tokens->dtype != TT_I64)
        return tt_fail(err, TT_ETYPE, "tokens", "expected an int32 or int64 tensor [T], got %s",
                       tt_describe(tokens, got, sizeof got));
    if (tokens->ndim != 1 || (tokens->shape[0] > 1 && tokens->stride[0] != 1))
        return tt_fail(err, TT_EVALUE, "tokens", "expected a contiguous 1-D tensor, got %s%s",
                       tokens->ndim == 1 ? "a strided " : "", tt_describe(tokens, got, sizeof got));
    tt_status st = tt_check_cpu(tokens, "tokens", err);
    if (st != TT_OK)
        return st;
    if (offsets->dtype != TT_I64)
        return tt_fail(err, TT_ETYPE, "offsets", "expected an int64 tensor [2N + 1], got %s",
                       tt_describe(offsets, got, sizeof got));
    if (offsets->ndim != 1 || offsets->shape[0] % 2 == 0 ||
        (offsets->shape[0] > 1 && offsets->stride[0] != 1))
        return tt_fail(err, TT_EVALUE, "offsets",
                       "expected a contiguous 1-D tensor of odd length 2N + 1, got %s",
                       tt_describe(offsets, got, sizeof got));
    st = tt_check_cpu(offsets, "offsets", err);
    if (st != TT_OK)
        return st;
    *pairs = offsets->shape[0] / 2;
    const int64_t out_shape[1] = {*pairs};
    st = tt_check_out(out, "out", TT_I64, 1, out_shape, err);
    if (st != TT_OK)
        return st;
    if (substitution_cost < 0)
        return tt_fail(err, TT_EVALUE, "substitution_cost", "expected a cost >= 0, got %lld",
                       (long long)substitution_cost);
    const int64_t *o = (const int64_t *)offsets->data, total = tokens->shape[0];
    if (o[0] < 0 || o[0] > total)
        return tt_fail(err, TT_EVALUE, "offsets", "expected offsets within [0, %lld], got %lld",
                       (long long)total, (long long)o[0]);
    for (int64_t k = 1; k <= 2 * *pairs; k++) {
        if (o[k] < o[k - 1] || o[k] > total)
            return tt_fail(err, TT_EVALUE, "offsets",
                           "expected non-decreasing offsets within [0, %lld], got %lld at "
                           "index %lld after %lld",
                           (long long)total, (long long)o[k], (long long)k, (long long)o[k - 1]);
    }
    return TT_OK;
}

tt_status tt_levenshtein(const tt_view *out, const tt_view *tokens, const tt_view *offsets,
                         int64_t substitution_cost, tt_error *err)
{
    int64_t pairs = 0;
    tt_status st = check_inputs(out, tokens, offsets, substitution_cost, &pairs, err);
    if (st != TT_OK || pairs == 0)
        return st;
    const int64_t *o = (const int64_t *)offsets->data;
    const int64_t cost = substitution_cost < 2 ? substitution_cost : 2;
    int64_t longest = 0; /* the longest shorter side: the buffers' size */
    for (int64_t i = 0; i < pairs; i++) {
        const int64_t m = o[2 * i + 1] - o[2 * i], n = o[2 * i + 2] - o[2 * i + 1];
        const int64_t shorter = m < n ? m : n;
        if (shorter > longest)
            longest = shorter;
    }
    int64_t *result = malloc((size_t)pairs * sizeof *result);
    int64_t *buffer = malloc((size_t)(2 * longest + 1) * sizeof *buffer);
    if (result == NULL || buffer == NULL) {
        free(result);
        free(buffer);
        return tt_fail(err, TT_ENOMEM, "tokens", "no memory for %lld pairs of up to %lld tokens",
                       (long long)pairs, (long long)longest);
    }
    const char *data = tokens->data;
    const tt_dtype dtype = tokens->dtype;
    for (int64_t i = 0; i < pairs; i++) {
        int64_t a = o[2 * i], m = o[2 * i + 1] - a, b = o[2 * i + 1], n = o[2 * i + 2] - b;
        while (m > 0 && n > 0 && load_token(data, dtype, a) == load_token(data, dtype, b))
            a++, b++, m--, n--;
        while (m > 0 && n > 0 &&
               load_token(data, dtype, a + m - 1) == load_token(data, dtype, b + n - 1))
            m--, n--;
        if (m == 0 || n == 0) {
            result[i] = m + n;
            continue;
        }
        if (n > m) { /* the shorter side goes to the buffer */
            const int64_t t = a;
            a = b, b = t;
            const int64_t u = m;
            m = n, n = u;
        }
        int64_t *shorter = buffer + longest + 1;
        for (int64_t j = 0; j < n; j++)
            shorter[j] = load_token(data, dtype, b + j);
        result[i] = distance(data, dtype, a, m, shorter, n, cost, buffer);
    }
    memcpy(out->data, result, (size_t)pairs * sizeof *result);
    free(result);
    free(buffer);
    return TT_OK;
}
