/*
 * ranking.c: per row of a multilabel batch, its coverage, label ranking average precision and
 * label ranking loss, summed. A row is sorted by score (descending) once; one walk over its
 * groups of equal scores then gives all three: after a group, `all` labels score at least the
 * group's score, `rel` of them relevant and `neg` not. An ignored label (target 2) is scored
 * below every other one; it is not relevant, but coverage counts it as a label to cover (the
 * numbers torchmetrics gives for an ignore_index). The workload: N up to millions, L from a
 * handful to a few thousand; O(L log L) per row (rows of up to 32 labels: insertion sort).
 *
 * The sums are formed in locals and added to `out` only when every row was read, so a bad
 * element (NaN score, label outside {0, 1, 2}) leaves `out` untouched.
 */
#include "kernels/ranking.h"

#include <math.h>
#include <stdlib.h>

typedef struct {
    double score;
    int64_t label; /* 0, 1 or 2 (ignored) */
} entry;

static int by_score_descending(const void *a, const void *b)
{
    const double x = ((const entry *)a)->score, y = ((const entry *)b)->score;
    return (x < y) - (x > y);
}

/* Rows of up to this many labels are sorted by insertion (the comparison inlined): qsort's call
 * through a function pointer per comparison cost ~1 us a row of 10 labels, most of the update. */
#define SMALL_ROW 32

/* Sorts row[0..labels) by score, descending. Order within a group of equal scores is free:
 * score_row reads each group as a whole. */
static void sort_row(entry *row, int64_t labels)
{
    if (labels > SMALL_ROW) {
        qsort(row, (size_t)labels, sizeof *row, by_score_descending);
        return;
    }
    for (int64_t j = 1; j < labels; j++) {
        const entry e = row[j];
        int64_t k = j;
        for (; k > 0 && row[k - 1].score < e.score; k--)
            row[k] = row[k - 1];
        row[k] = e;
    }
}

/* Adds one sorted row's (coverage, average precision, loss) to acc. */
static void score_row(const entry *row, int64_t labels, double *acc)
{
    int64_t relevant = 0, cover = 0;
    for (int64_t j = 0; j < labels; j++) {
        relevant += row[j].label == 1;
        cover += row[j].label != 0;
    }
    int64_t all = 0, rel = 0, neg = 0, covered = 0, coverage = 0;
    double precision = 0.0, wrong = 0.0;
    for (int64_t g = 0; g < labels;) {
        int64_t end = g, rel_here = 0;
        while (end < labels && row[end].score == row[g].score) {
            rel_here += row[end].label == 1;
            covered += row[end].label != 0;
            end++;
        }
        all += end - g;
        rel += rel_here;
        neg += end - g - rel_here;
        if (cover > 0 && coverage == 0 && covered == cover)
            coverage = all;
        precision += (double)rel_here * ((double)rel / (double)all);
        wrong += (double)rel_here * (double)neg;
        g = end;
    }
    const int informative = relevant > 0 && relevant < labels;
    acc[0] += (double)coverage;
    acc[1] += informative ? precision / (double)relevant : 1.0;
    acc[2] += informative ? wrong / ((double)relevant * (double)(labels - relevant)) : 0.0;
}

tt_status tt_ranking_update(const tt_view *out, const tt_view *preds, const tt_view *target,
                            tt_error *err)
{
    static const int64_t out_shape[1] = {3};
    char got[96];
    tt_status st = tt_check_out(out, "out", TT_F64, 1, out_shape, err);
    if (st == TT_OK)
        st = tt_check_scores(preds, "preds", 2, err);
    if (st == TT_OK)
        st = tt_check_labels(target, "target", 2, err);
    if (st != TT_OK)
        return st;
    if (target->shape[0] != preds->shape[0] || target->shape[1] != preds->shape[1])
        return tt_fail(err, TT_EVALUE, "target", "expected the shape of preds [%lld, %lld], got %s",
                       (long long)preds->shape[0], (long long)preds->shape[1],
                       tt_describe(target, got, sizeof got));
    const int64_t n = preds->shape[0], labels = preds->shape[1];
    if (n == 0 || labels == 0)
        return TT_OK;
    entry *row = malloc((size_t)labels * sizeof *row);
    if (row == NULL)
        return tt_fail(err, TT_ENOMEM, "preds", "no memory for a row of %lld labels",
                       (long long)labels);
    const int64_t ps0 = tt_step(preds, 0), ps1 = tt_step(preds, 1);
    const int64_t ts0 = tt_step(target, 0), ts1 = tt_step(target, 1);
    double acc[3] = {0.0, 0.0, 0.0};
    for (int64_t i = 0; i < n && st == TT_OK; i++) {
        for (int64_t j = 0; j < labels; j++) {
            const double s = tt_load_score(preds->data + i * ps0 + j * ps1, preds->dtype);
            const int64_t y = tt_load_label(target->data + i * ts0 + j * ts1, target->dtype);
            if (s != s) {
                st = tt_fail(err, TT_EVALUE, "preds", "NaN at sample %lld, column %lld",
                             (long long)i, (long long)j);
                break;
            }
            if (y < 0 || y > 2) {
                st = tt_fail(err, TT_EVALUE, "target",
                             "expected 0, 1 or 2 (ignored), got %lld at sample %lld, column %lld",
                             (long long)y, (long long)i, (long long)j);
                break;
            }
            row[j].score = y == 2 ? -INFINITY : s;
            row[j].label = y;
        }
        if (st != TT_OK)
            break;
        sort_row(row, labels);
        score_row(row, labels, acc);
    }
    free(row);
    if (st != TT_OK)
        return st;
    double *o = (double *)out->data;
    for (int k = 0; k < 3; k++)
        o[k] += acc[k];
    return TT_OK;
}
