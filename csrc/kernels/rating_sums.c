/*
 * rating_sums.c: FleissKappa's update statistics in one pass over the [N, C] counts: the column
 * sums, the sum of squares, and each sample's total (the number of raters, which must be one
 * number for the whole batch). torch needs five reductions and two checks over the batch, each
 * a full pass with its own allocation; here the counts are read once, in rows, with int64
 * arithmetic checked for overflow. rating_update is FleissKappa's whole update on that pass: the
 * sums added into the metric's states, its checks (one number of raters, the batches' before)
 * made before any write.
 */
#include "kernels/rating_sums.h"

#include <stdlib.h>
#include <string.h>

static tt_status check_all(const tt_view *out, const tt_view *ratings, tt_error *err)
{
    tt_status st = tt_check_labels(ratings, "ratings", 2, err);
    if (st != TT_OK)
        return st;
    const int64_t shape[1] = {ratings->shape[1] + 3};
    return tt_check_out(out, "out", TT_I64, 1, shape, err);
}

/* Counts below 2^24 in rows of fewer than 2^15 categories: no product or sum within a row can
 * overflow, nor can a column's sum over fewer than 2^39 rows; such rows (every realistic one)
 * skip the per-value overflow checks, which would otherwise serialise the loop. */
#define SMALL_BITS 24
#define SMALL_COLUMNS (1 << 15)
#define SMALL_ROWS ((int64_t)1 << 39)

/* One row's values as int64: the row itself when it is contiguous int64, else widened into v. */
static const int64_t *load_row(const tt_view *ratings, int64_t i, int64_t c, int64_t *v)
{
    const char *p = ratings->data + i * tt_step(ratings, 0);
    const int64_t col = tt_step(ratings, 1);
    if (ratings->dtype == TT_I64 && col == (int64_t)sizeof(int64_t))
        return (const int64_t *)p;
    for (int64_t j = 0; j < c; j++)
        v[j] = tt_load_label(p + j * col, ratings->dtype);
    return v;
}

/* Adds row v into sums with every operation checked: 0, or 1 when a value is negative or a sum
 * would overflow (then sums may be partly updated: the caller fails). */
static int add_checked(const int64_t *v, int64_t c, int64_t *sums, int64_t *total, int64_t *square)
{
    int bad = 0;
    for (int64_t j = 0; j < c; j++) {
        int64_t v2 = 0;
        bad |= v[j] < 0;
        bad |= __builtin_mul_overflow(v[j], v[j], &v2);
        bad |= __builtin_add_overflow(*square, v2, square);
        bad |= __builtin_add_overflow(*total, v[j], total);
        bad |= __builtin_add_overflow(sums[j], v[j], &sums[j]);
    }
    return bad;
}

/* What one pass over a batch gives besides the column sums. */
typedef struct {
    int64_t squares, least, most;
    int64_t first;        /* the number of ratings of sample 0 */
    int64_t differs_at;   /* the first sample with another number of ratings, or -1 */
    int64_t differs_from; /* that sample's number */
} batch_sums;

/* The column sums of ratings into sums[C] (zeroed by the caller; v is scratch of C values) and
 * the rest into *b: one pass, row by row. ValueError naming ratings for a negative count or a
 * sum past INT64_MAX (sums then partly written: the caller discards them). */
static tt_status scan(const tt_view *ratings, int64_t *sums, int64_t *v, batch_sums *b,
                      tt_error *err)
{
    const int64_t n = ratings->shape[0], c = ratings->shape[1];
    const int small_shape = c < SMALL_COLUMNS && n < SMALL_ROWS;
    tt_status st = TT_OK;
    *b = (batch_sums){0, INT64_MAX, INT64_MIN, 0, -1, 0};
    for (int64_t i = 0; i < n; i++) {
        const int64_t *row = load_row(ratings, i, c, v);
        uint64_t bits = 0;
        for (int64_t j = 0; j < c; j++)
            bits |= (uint64_t)row[j]; /* a negative value sets the top bit */
        int64_t total = 0, square = 0;
        int bad = 0;
        if (small_shape && bits >> SMALL_BITS == 0) {
            for (int64_t j = 0; j < c; j++) {
                total += row[j];
                square += row[j] * row[j];
                sums[j] += row[j];
            }
        } else {
            bad = add_checked(row, c, sums, &total, &square);
        }
        if (bad || __builtin_add_overflow(b->squares, square, &b->squares)) {
            for (int64_t j = 0; j < c && st == TT_OK; j++)
                if (row[j] < 0)
                    st = tt_fail(err, TT_EVALUE, "ratings",
                                 "expected counts >= 0, got %lld at [%lld, %lld]",
                                 (long long)row[j], (long long)i, (long long)j);
            if (st == TT_OK)
                st = tt_fail(err, TT_EVALUE, "ratings",
                             "expected counts whose sums fit int64 (sample %lld)", (long long)i);
            return st;
        }
        if (i == 0)
            b->first = total;
        else if (total != b->first && b->differs_at < 0) {
            b->differs_at = i;
            b->differs_from = total;
        }
        b->least = total < b->least ? total : b->least;
        b->most = total > b->most ? total : b->most;
    }
    return TT_OK;
}

/* Column sums and scratch for a batch of c categories, zeroed; NULL when out of memory. */
static int64_t *scratch(int64_t c) { return calloc(2 * (size_t)(c > 0 ? c : 1), sizeof(int64_t)); }

tt_status tt_rating_sums(const tt_view *out, const tt_view *ratings, tt_error *err)
{
    tt_status st = check_all(out, ratings, err);
    if (st != TT_OK)
        return st;
    const int64_t c = ratings->shape[1];
    int64_t *sums = scratch(c);
    if (sums == NULL)
        return tt_fail(err, TT_ENOMEM, "out", "out of memory for %lld categories", (long long)c);
    batch_sums b;
    st = scan(ratings, sums, sums + (c > 0 ? c : 1), &b, err);
    if (st == TT_OK) {
        int64_t *dst = (int64_t *)out->data;
        for (int64_t j = 0; j < c; j++)
            dst[j] = sums[j];
        dst[c] = b.squares;
        dst[c + 1] = b.least;
        dst[c + 2] = b.most;
    }
    free(sums);
    return st;
}

/* The checks of the batch against what the states hold, before any write: one number of raters,
 * those of the batches before (bounds held), totals of C, no sum past INT64_MAX. */
static tt_status check_update(const tt_view *totals, const int64_t *sums_state,
                              const int64_t *bounds, const int64_t *batch, const batch_sums *b,
                              const tt_view *ratings, tt_error *err)
{
    const int64_t n = ratings->shape[0], c = ratings->shape[1];
    if (b->differs_at >= 0)
        return tt_fail(err, TT_EVALUE, "ratings",
                       "every sample must have the same number of ratings (Fleiss' kappa), got "
                       "%lld for sample 0 and %lld for sample %lld",
                       (long long)b->first, (long long)b->differs_from, (long long)b->differs_at);
    if (bounds[0] != INT64_MIN && (b->first != bounds[0] || c != bounds[2]))
        return tt_fail(err, TT_EVALUE, "ratings",
                       "expected %lld categories and %lld raters per sample (as the batches "
                       "before), got %lld and %lld",
                       (long long)bounds[2], (long long)bounds[0], (long long)c,
                       (long long)b->first);
    const int64_t shape[1] = {c};
    tt_status st = tt_check_out(totals, "totals", TT_I64, 1, shape, err);
    if (st != TT_OK)
        return st;
    const int64_t *held = (const int64_t *)totals->data;
    int64_t sum = 0;
    int bad = __builtin_add_overflow(sums_state[0], n, &sum);
    bad |= __builtin_add_overflow(sums_state[1], b->squares, &sum);
    for (int64_t j = 0; j < c; j++)
        bad |= __builtin_add_overflow(held[j], batch[j], &sum);
    if (bad)
        return tt_fail(err, TT_EVALUE, "ratings",
                       "expected counts whose sums with the states fit int64");
    return TT_OK;
}

tt_status tt_rating_update(const tt_view *totals, const tt_view *sums, const tt_view *bounds,
                           const tt_view *ratings, tt_error *err)
{
    static const int64_t two[1] = {2}, four[1] = {4};
    tt_status st = tt_check_labels(ratings, "ratings", 2, err);
    if (st == TT_OK)
        st = tt_check_out(sums, "sums", TT_I64, 1, two, err);
    if (st == TT_OK)
        st = tt_check_out(bounds, "bounds", TT_I64, 1, four, err);
    if (st != TT_OK || ratings->shape[0] == 0)
        return st;
    const int64_t c = ratings->shape[1];
    int64_t *batch = scratch(c);
    if (batch == NULL)
        return tt_fail(err, TT_ENOMEM, "totals", "out of memory for %lld categories", (long long)c);
    batch_sums b;
    int64_t *state = (int64_t *)sums->data, *limits = (int64_t *)bounds->data;
    st = scan(ratings, batch, batch + (c > 0 ? c : 1), &b, err);
    if (st == TT_OK)
        st = check_update(totals, state, limits, batch, &b, ratings, err);
    if (st == TT_OK) {
        int64_t *held = (int64_t *)totals->data;
        for (int64_t j = 0; j < c; j++)
            held[j] += batch[j];
        state[0] += ratings->shape[0];
        state[1] += b.squares;
        if (limits[0] == INT64_MIN) {
            limits[0] = b.first;
            limits[1] = -b.first;
            limits[2] = c;
            limits[3] = -c;
        }
    }
    free(batch);
    return st;
}
