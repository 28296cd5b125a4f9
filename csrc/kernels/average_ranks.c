/*
 * average_ranks.c: per column, the values' 1-based ranks with ties averaged. The workload:
 * Spearman's compute over every sample seen (10^2 to 10^7 rows, a few columns), where torch
 * needed a strided sort and a dozen full passes (run starts, cumulative max and min, a
 * scatter). Here each column is read once into (key, row) records, whose integer keys order
 * the floats, sorted by a merge sort, and each run of equal keys writes its mean rank straight
 * to the rows it holds. O(N log N) per column, 32 N bytes of scratch.
 *
 * Every value is checked (no NaN) before `out` is written.
 */
#include "kernels/average_ranks.h"

#include <stdlib.h>

typedef struct {
    uint64_t key; /* the value's bits made monotone: unsigned order = float order */
    int64_t row;
} record;

/* Monotone key of a double; -0.0 and 0.0 share one. */
static uint64_t key_of(double v)
{
    uint64_t bits;
    if (v == 0.0)
        v = 0.0;
    memcpy(&bits, &v, sizeof bits);
    return (bits & 0x8000000000000000u) ? ~bits : bits | 0x8000000000000000u;
}

/* Sorts a[0..n) by key (insertion sort below 32 records); tmp holds at least n / 2 records.
 * Ties need no stable order: equal keys share one rank. */
static void sort_records(record *a, record *tmp, int64_t n)
{
    if (n <= 32) {
        for (int64_t i = 1; i < n; i++) {
            const record x = a[i];
            int64_t j = i;
            for (; j > 0 && x.key < a[j - 1].key; j--)
                a[j] = a[j - 1];
            a[j] = x;
        }
        return;
    }
    const int64_t h = n / 2;
    sort_records(a, tmp, h);
    sort_records(a + h, tmp, n - h);
    if (a[h - 1].key <= a[h].key)
        return;
    memcpy(tmp, a, (size_t)h * sizeof *a);
    int64_t i = 0, j = h, k = 0;
    while (i < h && j < n)
        a[k++] = a[j].key < tmp[i].key ? a[j++] : tmp[i++];
    while (i < h)
        a[k++] = tmp[i++];
}

static tt_status check_args(const tt_view *out, const tt_view *x, tt_error *err)
{
    char got[96];
    tt_status st = tt_check_scores(x, "x", 2, err);
    if (st != TT_OK)
        return st;
    const int64_t shape[2] = {x->shape[0], x->shape[1]};
    st = tt_check_out(out, "out", TT_F64, 2, shape, err);
    if (st == TT_OK && shape[0] > INT64_MAX / 2)
        st = tt_fail(err, TT_EVALUE, "x", "too many rows: %s", tt_describe(x, got, sizeof got));
    return st;
}

/* The first NaN of x as (row, column), or row -1. */
static void first_nan(const tt_view *x, int64_t *row, int64_t *col)
{
    const int64_t n = x->shape[0], k = x->shape[1], rs = tt_step(x, 0), cs = tt_step(x, 1);
    *row = -1;
    *col = 0;
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < k; j++) {
            const double v = tt_load_score(x->data + i * rs + j * cs, x->dtype);
            if (v != v) {
                *row = i;
                *col = j;
                return;
            }
        }
}

tt_status tt_average_ranks(const tt_view *out, const tt_view *x, tt_error *err)
{
    tt_status st = check_args(out, x, err);
    if (st != TT_OK)
        return st;
    int64_t bad_row, bad_col;
    first_nan(x, &bad_row, &bad_col);
    if (bad_row >= 0)
        return tt_fail(err, TT_EVALUE, "x", "NaN at [%lld, %lld] (a NaN has no rank)",
                       (long long)bad_row, (long long)bad_col);
    const int64_t n = x->shape[0], k = x->shape[1], rs = tt_step(x, 0), cs = tt_step(x, 1);
    if (n == 0 || k == 0)
        return TT_OK;
    record *a = malloc((size_t)n * 2 * sizeof *a);
    if (a == NULL)
        return tt_fail(err, TT_ENOMEM, "out", "no memory to rank %lld rows", (long long)n);
    double *dst = (double *)out->data;
    for (int64_t j = 0; j < k; j++) {
        for (int64_t i = 0; i < n; i++) {
            a[i].key = key_of(tt_load_score(x->data + i * rs + j * cs, x->dtype));
            a[i].row = i;
        }
        sort_records(a, a + n, n);
        for (int64_t start = 0; start < n;) {
            int64_t end = start + 1;
            while (end < n && a[end].key == a[start].key)
                end++;
            const double rank = (double)(start + end + 1) / 2.0; /* mean of start+1 .. end */
            for (int64_t r = start; r < end; r++)
                dst[a[r].row * k + j] = rank;
            start = end;
        }
    }
    free(a);
    return TT_OK;
}
