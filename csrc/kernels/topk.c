/*
 * topk.c: which classes fall in each row's top k, without sorting the row. Classes are ordered
 * by score descending, lower index first among equal scores (a stable order). Rows of up to 32
 * classes count each class's rank pairwise (O(C^2) compares, no branches); wider rows keep a
 * small sorted list of their best k while scanning the C scores once: O(C*k) worst case, O(C)
 * in practice for the small k that top-k accuracy uses.
 *
 * A row is loaded and checked before anything is counted for it; a bad row stops the walk and
 * the rows before it are uncounted again by a second walk with sign -1.
 */
#include "topk.h"

#include <stdlib.h>

typedef struct {
    const tt_view *preds, *target, *mask;
    const int64_t *ignore_index;
    int64_t k;
    int64_t *out;      /* [C, 3] */
    double *row;       /* scratch [C]: one row of scores */
    double *best_v;    /* scratch [k]: the best scores so far, in rank order */
    int64_t *best;     /* scratch [C + 1]: their class indices */
} topk_job;

/* Up to this many classes a row's ranks are counted pairwise, O(C^2) but free of branches; the
 * insertion below mispredicts a branch at almost every insertion on random scores. */
#define PAIRWISE_MAX_CLASSES 32

/* Fills job->best with the classes whose stable rank is below k, in class order. */
static void select_top_pairwise(const topk_job *job, int64_t classes)
{
    const double *row = job->row;
    int64_t count = 0;
    for (int64_t j = 0; j < classes; j++) {
        const double v = row[j];
        int64_t rank = 0;
        for (int64_t i = 0; i < j; i++) /* earlier classes win ties */
            rank += row[i] >= v;
        for (int64_t i = j + 1; i < classes; i++)
            rank += row[i] > v;
        job->best[count] = j;
        count += rank < job->k;
    }
}

/* Fills job->best with the k best class indices of the loaded row, in rank order. */
static void select_top_insertion(const topk_job *job, int64_t classes)
{
    const double *row = job->row;
    double *best_v = job->best_v;
    int64_t *best = job->best, count = 0;
    for (int64_t j = 0; j < classes; j++) {
        const double v = row[j];
        /* equal scores keep the earlier class ahead, so only a strictly larger score moves up */
        if (count == job->k && !(v > best_v[count - 1]))
            continue;
        int64_t pos = count < job->k ? count++ : count - 1;
        while (pos > 0 && v > best_v[pos - 1]) {
            best_v[pos] = best_v[pos - 1];
            best[pos] = best[pos - 1];
            pos--;
        }
        best_v[pos] = v;
        best[pos] = j;
    }
}

/* Loads row r of preds into job->row; returns 1 when it holds a NaN. */
static int load_row(const topk_job *job, int64_t r)
{
    const tt_view *preds = job->preds;
    tt_view row = *preds;
    row.ndim = 1;
    row.data = preds->data + r * tt_step(preds, 0);
    row.shape[0] = preds->shape[1];
    row.stride[0] = preds->stride[1];
    return tt_load_scores(&row, 0, row.shape[0], 0, job->row) >= 0;
}

static int64_t topk_walk(const topk_job *job, int64_t sign, int64_t stop, tt_error *err)
{
    int64_t targets[TT_CHUNK];
    uint8_t keep[TT_CHUNK];
    const tt_view *preds = job->preds;
    const int64_t rows = preds->shape[0], classes = preds->shape[1];
    const int has_ignore = job->ignore_index != NULL;
    const int64_t ignore = has_ignore ? *job->ignore_index : 0;

    for (int64_t start = 0; start < rows && start < stop; start += TT_CHUNK) {
        const int64_t n = rows - start < TT_CHUNK ? rows - start : TT_CHUNK;
        tt_load_labels(job->target, start, n, 0, targets);
        tt_load_keep(job->mask, start, n, keep);
        for (int64_t i = 0; i < n; i++) {
            const int64_t r = start + i, t = targets[i];
            if (r >= stop)
                return -1;
            /* NaN is an error even in a masked row */
            if (load_row(job, r)) {
                if (sign > 0)
                    tt_fail(err, TT_EVALUE, "preds", "NaN in the scores of sample %lld", (long long)r);
                return r;
            }
            if ((keep[i] == 0) | (has_ignore & (t == ignore)))
                continue;
            if ((uint64_t)t >= (uint64_t)classes) {
                if (sign > 0)
                    tt_fail(err, TT_EVALUE, "target", "label %lld at index %lld is out of range [0, %lld)",
                            (long long)t, (long long)r, (long long)classes);
                return r;
            }
            if (classes <= PAIRWISE_MAX_CLASSES)
                select_top_pairwise(job, classes);
            else
                select_top_insertion(job, classes);
            for (int64_t m = 0; m < job->k; m++) {
                job->out[job->best[m] * 3 + 0] += sign;
                if (job->best[m] == t)
                    job->out[t * 3 + 1] += sign;
            }
            job->out[t * 3 + 2] += sign;
        }
    }
    return -1;
}

tt_status tt_topk_update(const tt_view *out, const tt_view *preds, const tt_view *target,
                         const tt_view *mask, const int64_t *ignore_index, int64_t k,
                         tt_error *err)
{
    if (tt_check_scores(preds, "preds", 2, err) || tt_check_labels(target, "target", 1, err))
        return err->status;
    const int64_t classes = preds->shape[1];
    if (target->shape[0] != preds->shape[0])
        return tt_fail(err, TT_EVALUE, "target", "expected %lld samples (as preds), got %lld",
                       (long long)preds->shape[0], (long long)target->shape[0]);
    if (k < 1 || k > classes)
        return tt_fail(err, TT_EVALUE, "k", "expected 1 <= k <= %lld (the number of classes), got %lld",
                       (long long)classes, (long long)k);
    const int64_t shape[2] = {classes, 3};
    if (tt_check_out(out, "out", TT_I64, 2, shape, err) || tt_check_mask(mask, preds->shape[0], err))
        return err->status;

    topk_job job = {preds, target, mask, ignore_index, k, (int64_t *)out->data, NULL, NULL, NULL};
    job.row = malloc((size_t)classes * sizeof *job.row);
    job.best_v = malloc((size_t)k * sizeof *job.best_v);
    /* the pairwise path stores a candidate before it knows whether it counts: room for C + 1 */
    job.best = malloc((size_t)(classes + 1) * sizeof *job.best);
    tt_status status = TT_OK;
    if (job.row == NULL || job.best_v == NULL || job.best == NULL) {
        status = tt_fail(err, TT_ENOMEM, "preds", "out of memory for %lld classes", (long long)classes);
        goto done;
    }
    const int64_t bad = topk_walk(&job, +1, INT64_MAX, err);
    if (bad >= 0) {
        topk_walk(&job, -1, bad, err);
        status = err->status;
    }
done:
    free(job.row);
    free(job.best_v);
    free(job.best);
    return status;
}
