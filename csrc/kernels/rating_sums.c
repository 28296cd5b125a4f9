/*
 * rating_sums.c: FleissKappa's update statistics in one pass over the [N, C] counts: the column
 * sums, the sum of squares, and each sample's total (the number of raters, which must be one
 * number for the whole batch). torch needs five reductions and two checks over the batch, each
 * a full pass with its own allocation; here the counts are read once, in rows, with int64
 * arithmetic checked for overflow.
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

tt_status tt_rating_sums(const tt_view *out, const tt_view *ratings, tt_error *err)
{
    tt_status st = check_all(out, ratings, err);
    if (st != TT_OK)
        return st;
    const int64_t n = ratings->shape[0], c = ratings->shape[1];
    int64_t *sums = calloc(2 * (size_t)(c > 0 ? c : 1), sizeof *sums);
    if (sums == NULL)
        return tt_fail(err, TT_ENOMEM, "out", "out of memory for %lld categories", (long long)c);
    int64_t *v = sums + (c > 0 ? c : 1);
    int64_t squares = 0, least = INT64_MAX, most = INT64_MIN;
    const int small_shape = c < SMALL_COLUMNS && n < SMALL_ROWS;
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
        if (bad || __builtin_add_overflow(squares, square, &squares)) {
            for (int64_t j = 0; j < c && st == TT_OK; j++)
                if (row[j] < 0)
                    st = tt_fail(err, TT_EVALUE, "ratings",
                                 "expected counts >= 0, got %lld at [%lld, %lld]",
                                 (long long)row[j], (long long)i, (long long)j);
            if (st == TT_OK)
                st = tt_fail(err, TT_EVALUE, "ratings",
                             "expected counts whose sums fit int64 (sample %lld)", (long long)i);
            break;
        }
        least = total < least ? total : least;
        most = total > most ? total : most;
    }
    if (st == TT_OK) {
        int64_t *dst = (int64_t *)out->data;
        for (int64_t j = 0; j < c; j++)
            dst[j] = sums[j];
        dst[c] = squares;
        dst[c + 1] = least;
        dst[c + 2] = most;
    }
    free(sums);
    return st;
}
