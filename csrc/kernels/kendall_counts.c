/*
 * kendall_counts.c: Kendall's pair counts by Knight's method. Per output, the pairs are sorted
 * by (x, y); the discordant pairs are the strict inversions of the y sequence that order gives,
 * counted while a merge sort puts y in order; the runs of equal x, of equal (x, y) and (after
 * that sort) of equal y give the ties, and the concordant pairs follow. The workload:
 * KendallRankCorrCoef's compute over every sample (10 to 10^7 pairs), and its forward over one
 * batch, where torch needed three sorts and a dozen passes per bit of the target's ranks (each
 * a dispatch that costs more than the whole count of a small batch). O(N log N) per output,
 * 32 N bytes of scratch. Counts are exact int64; the tie moments are summed exactly in 128 bits
 * and rounded once.
 *
 * Every pair is checked (no NaN) before `out` is written.
 */
#include "kernels/kendall_counts.h"

#include <stdlib.h>

typedef struct {
    double x, y;
} pair;

static int pair_before(const pair *p, const pair *q)
{
    return p->x < q->x || (p->x == q->x && p->y < q->y);
}

/* Stable sort of a[0..n) by (x, y) (insertion sort below 32 pairs); tmp holds n / 2 pairs. */
static void sort_pairs(pair *a, pair *tmp, int64_t n)
{
    if (n <= 32) {
        for (int64_t i = 1; i < n; i++) {
            const pair v = a[i];
            int64_t j = i;
            for (; j > 0 && pair_before(&v, &a[j - 1]); j--)
                a[j] = a[j - 1];
            a[j] = v;
        }
        return;
    }
    const int64_t h = n / 2;
    sort_pairs(a, tmp, h);
    sort_pairs(a + h, tmp, n - h);
    memcpy(tmp, a, (size_t)h * sizeof *a);
    int64_t i = 0, j = h, k = 0;
    while (i < h && j < n)
        a[k++] = pair_before(&a[j], &tmp[i]) ? a[j++] : tmp[i++];
    while (i < h)
        a[k++] = tmp[i++];
}

/* Sorts y[0..n) ascending (tmp: n / 2 values) and returns the pairs i < j with y[i] > y[j]. */
static int64_t sort_counting(double *y, double *tmp, int64_t n)
{
    if (n < 2)
        return 0;
    const int64_t h = n / 2;
    int64_t count = sort_counting(y, tmp, h) + sort_counting(y + h, tmp, n - h);
    memcpy(tmp, y, (size_t)h * sizeof *y);
    int64_t i = 0, j = h, k = 0;
    while (i < h && j < n) {
        if (y[j] < tmp[i]) {
            count += h - i; /* every left value still waiting is greater */
            y[k++] = y[j++];
        } else {
            y[k++] = tmp[i++];
        }
    }
    while (i < h)
        y[k++] = tmp[i++];
    return count;
}

/* Tie statistics of runs: number of runs, sum t(t-1)/2, sum t(t-1)(t-2), sum t(t-1)(2t+5). */
typedef struct {
    int64_t runs, tied;
    __int128 t1, t2;
} ties;

static void add_run(ties *s, int64_t t)
{
    const __int128 u = t;
    s->runs++;
    s->tied += t * (t - 1) / 2;
    s->t1 += u * (u - 1) * (u - 2);
    s->t2 += u * (u - 1) * (2 * u + 5);
}

static tt_status check_args(const tt_view *out, const tt_view *pairs, tt_error *err)
{
    char got[96];
    if (pairs->dtype != TT_F32 && pairs->dtype != TT_F64)
        return tt_fail(err, TT_ETYPE, "pairs",
                       "expected a float32 or float64 tensor [N, 2, D], got %s",
                       tt_describe(pairs, got, sizeof got));
    if (pairs->ndim != 3 || pairs->shape[1] != 2)
        return tt_fail(err, TT_EVALUE, "pairs", "expected a tensor [N, 2, D], got %s",
                       tt_describe(pairs, got, sizeof got));
    tt_status st = tt_check_cpu(pairs, "pairs", err);
    const int64_t shape[2] = {pairs->shape[2], 11};
    if (st == TT_OK)
        st = tt_check_out(out, "out", TT_F64, 2, shape, err);
    return st;
}

static double at(const tt_view *v, int64_t i, int64_t row, int64_t d)
{
    return tt_load_score(v->data + i * tt_step(v, 0) + row * tt_step(v, 1) + d * tt_step(v, 2),
                         v->dtype);
}

/* The 11 statistics of output d into row (a: n pairs of scratch, y: n values, tmp: n / 2 + 1). */
static void count_output(const tt_view *pairs, int64_t d, pair *a, double *y, pair *tmp,
                         double *row)
{
    const int64_t n = pairs->shape[0];
    for (int64_t i = 0; i < n; i++) {
        a[i].x = at(pairs, i, 0, d);
        a[i].y = at(pairs, i, 1, d);
    }
    sort_pairs(a, tmp, n);
    ties tx = {0, 0, 0, 0}, ty = {0, 0, 0, 0};
    int64_t tied_xy = 0;
    for (int64_t s = 0, sxy = 0, i = 1; i <= n; i++) {
        if (i == n || a[i].x != a[s].x) {
            add_run(&tx, i - s);
            s = i;
        }
        if (i == n || a[i].x != a[sxy].x || a[i].y != a[sxy].y) {
            tied_xy += (i - sxy) * (i - sxy - 1) / 2;
            sxy = i;
        }
    }
    for (int64_t i = 0; i < n; i++)
        y[i] = a[i].y;
    const int64_t discordant = sort_counting(y, (double *)tmp, n);
    for (int64_t s = 0, i = 1; i <= n; i++)
        if (i == n || y[i] != y[s]) {
            add_run(&ty, i - s);
            s = i;
        }
    const int64_t concordant = n * (n - 1) / 2 - tx.tied - ty.tied + tied_xy - discordant;
    const double values[11] = {(double)(concordant - discordant),
                               (double)concordant,
                               (double)discordant,
                               (double)tx.runs,
                               (double)ty.runs,
                               (double)tx.tied,
                               (double)tx.t1,
                               (double)tx.t2,
                               (double)ty.tied,
                               (double)ty.t1,
                               (double)ty.t2};
    memcpy(row, values, sizeof values);
}

tt_status tt_kendall_counts(const tt_view *out, const tt_view *pairs, tt_error *err)
{
    tt_status st = check_args(out, pairs, err);
    if (st != TT_OK)
        return st;
    const int64_t n = pairs->shape[0], k = pairs->shape[2];
    for (int64_t i = 0; i < n; i++)
        for (int64_t r = 0; r < 2; r++)
            for (int64_t d = 0; d < k; d++) {
                const double v = at(pairs, i, r, d);
                if (v != v)
                    return tt_fail(err, TT_EVALUE, "pairs", "NaN at [%lld, %lld, %lld]",
                                   (long long)i, (long long)r, (long long)d);
            }
    /* pairs a [n], scratch tmp [n / 2 + 1] (pairs, or as many doubles), y [n] */
    pair *a = malloc(((size_t)n * 2 + 1) * sizeof *a);
    if (a == NULL)
        return tt_fail(err, TT_ENOMEM, "out", "no memory to count %lld pairs", (long long)n);
    pair *tmp = a + n;
    double *y = (double *)(tmp + n / 2 + 1);
    for (int64_t d = 0; d < k; d++)
        count_output(pairs, d, a, y, tmp, (double *)out->data + d * 11);
    free(a);
    return TT_OK;
}
