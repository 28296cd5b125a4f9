/*
 * topk.c: which classes fall in each row's top k, without sorting the row. Classes are ordered
 * by score descending, lower index first among equal scores (a stable order), and a row keeps a
 * small sorted list of its best k while it scans the C scores once: O(C*k) worst case, O(C) in
 * practice for the small k that top-k accuracy uses.
 *
 * Row results are validated before anything is counted for that row; a bad row stops the walk
 * and the rows before it are uncounted again by a second walk with sign -1.
 */
#include "topk.h"

#include <stdlib.h>

typedef struct {
    const tt_view *preds, *target, *mask;
    const int64_t *ignore_index;
    int64_t k;
    int64_t *out;      /* [C, 3] */
    double *row;       /* scratch [C] */
    int64_t *best;     /* scratch [k]: class indices in rank order */
} topk_job;

/* Fills job->best with the k best class indices of the loaded row; 1 when the row has a NaN. */
static int select_top(const topk_job *job, int64_t classes)
{
    const double *row = job->row;
    int64_t *best = job->best, count = 0;
    for (int64_t j = 0; j < classes; j++) {
        const double v = row[j];
        if (v != v)
            return 1;
        /* equal scores keep the earlier class ahead, so only a strictly larger score moves up */
        if (count == job->k && !(v > row[best[count - 1]]))
            continue;
        int64_t pos = count < job->k ? count++ : count - 1;
        while (pos > 0 && v > row[best[pos - 1]]) {
            best[pos] = best[pos - 1];
            pos--;
        }
        best[pos] = j;
    }
    return 0;
}

static int64_t topk_walk(const topk_job *job, int64_t sign, int64_t stop, tt_error *err)
{
    int64_t targets[TT_CHUNK];
    uint8_t keep[TT_CHUNK];
    const tt_view *preds = job->preds;
    const int64_t rows = preds->shape[0], classes = preds->shape[1];

    for (int64_t start = 0; start < rows && start < stop; start += TT_CHUNK) {
        const int64_t n = rows - start < TT_CHUNK ? rows - start : TT_CHUNK;
        tt_load_labels(job->target, start, n, 0, targets);
        tt_load_keep(job->mask, start, n, keep);
        for (int64_t i = 0; i < n; i++) {
            const int64_t r = start + i, t = targets[i];
            if (r >= stop)
                return -1;
            /* one row at a time, as double; NaN is an error even in a masked row */
            for (int64_t j = 0; j < classes; j++)
                job->row[j] = tt_load_score(preds->data + r * tt_step(preds, 0) + j * tt_step(preds, 1),
                                            preds->dtype);
            if (select_top(job, classes)) {
                if (sign > 0)
                    tt_fail(err, TT_EVALUE, "preds", "NaN in the scores of sample %lld", (long long)r);
                return r;
            }
            if (!keep[i] || (job->ignore_index != NULL && t == *job->ignore_index))
                continue;
            if ((uint64_t)t >= (uint64_t)classes) {
                if (sign > 0)
                    tt_fail(err, TT_EVALUE, "target", "label %lld at index %lld is out of range [0, %lld)",
                            (long long)t, (long long)r, (long long)classes);
                return r;
            }
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

    topk_job job = {preds, target, mask, ignore_index, k, (int64_t *)out->data, NULL, NULL};
    job.row = malloc((size_t)classes * sizeof *job.row);
    job.best = malloc((size_t)k * sizeof *job.best);
    tt_status status = TT_OK;
    if (job.row == NULL || job.best == NULL) {
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
    free(job.best);
    return status;
}
