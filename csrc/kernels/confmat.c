/*
 * confmat.c: confusion matrices from labels and from scores (the argmax of each row, argmax.c),
 * out[target, prediction]. The workload is a validation loop calling update once per batch: N
 * from tens to millions, C from 2 to thousands. (Binary and multilabel matrices, from
 * thresholded scores, are confmat_threshold.c's.)
 *
 * Samples are walked in chunks: labels are converted to int64 once per chunk, predictions are
 * computed per chunk (argmax in a typed loop), then one tight loop validates and counts. A bad
 * sample stops the walk; the same walk then runs again with sign -1 up to that sample, so `out`
 * is restored without a scratch copy of a possibly large C x C matrix.
 */
#include "kernels/argmax.h"
#include "kernels/confmat.h"

typedef struct {
    const tt_view *preds, *target, *mask;
    const int64_t *ignore_index;
    int64_t classes;
    int from_scores;
    int64_t *out;
} labels_job;

/* ---- the counting walk ---------------------------------------------------------------------- */

/* Adds `sign` to out[target, pred] for every kept sample before index `stop`. Returns -1, or the
 * index of the first bad sample (and fills err when sign > 0). */
static int64_t labels_walk(const labels_job *job, int64_t sign, int64_t stop, tt_error *err)
{
    int64_t targets[TT_CHUNK], preds[TT_CHUNK];
    uint8_t keep[TT_CHUNK];
    const int64_t classes = job->classes;
    const int64_t n_total = job->target->shape[0];
    const int has_ignore = job->ignore_index != NULL;
    const int64_t ignore = has_ignore ? *job->ignore_index : 0;

    for (int64_t start = 0; start < n_total && start < stop; start += TT_CHUNK) {
        int64_t n = n_total - start < TT_CHUNK ? n_total - start : TT_CHUNK;
        if (stop - start < n)
            n = stop - start;
        int64_t nan_row = -1;
        tt_load_labels(job->target, start, n, 0, targets);
        tt_load_keep(job->mask, start, n, keep);
        if (job->from_scores) {
            nan_row = tt_argmax_rows(job->preds, start, n, preds);
            if (nan_row >= 0)
                n = nan_row;
        } else {
            tt_load_labels(job->preds, start, n, 0, preds);
        }
        for (int64_t i = 0; i < n; i++) {
            const int64_t t = targets[i], p = preds[i];
            /* bitwise, not ||: a branch on the random label would mispredict often */
            if ((keep[i] == 0) | (has_ignore & (t == ignore)))
                continue;
            if ((uint64_t)t >= (uint64_t)classes) {
                if (sign > 0)
                    tt_fail(err, TT_EVALUE, "target",
                            "label %lld at index %lld is out of range [0, %lld)", (long long)t,
                            (long long)(start + i), (long long)classes);
                return start + i;
            }
            if ((uint64_t)p >= (uint64_t)classes) {
                if (sign > 0)
                    tt_fail(err, TT_EVALUE, "preds",
                            "label %lld at index %lld is out of range [0, %lld)", (long long)p,
                            (long long)(start + i), (long long)classes);
                return start + i;
            }
            job->out[t * classes + p] += sign;
        }
        if (nan_row >= 0) {
            if (sign > 0)
                tt_fail(err, TT_EVALUE, "preds", "NaN in the scores of sample %lld",
                        (long long)(start + nan_row));
            return start + nan_row;
        }
    }
    return -1;
}

static tt_status labels_run(const labels_job *job, tt_error *err)
{
    int64_t bad = labels_walk(job, +1, INT64_MAX, err);
    if (bad < 0)
        return TT_OK;
    labels_walk(job, -1, bad, err); /* undo: the samples before `bad` were all valid */
    return err->status;
}

tt_status tt_confmat_labels(const tt_view *out, const tt_view *preds, const tt_view *target,
                            const tt_view *mask, const int64_t *ignore_index, tt_error *err)
{
    if (out->ndim != 2)
        return tt_fail(err, TT_EVALUE, "out", "expected an int64 [C, C] matrix, got %d-D",
                       out->ndim);
    if (tt_check_square_out(out, out->shape[0], err) || tt_check_labels(preds, "preds", 1, err) ||
        tt_check_labels(target, "target", 1, err) ||
        tt_check_same_length(preds, "preds", target, err) ||
        tt_check_mask(mask, target->shape[0], err))
        return err->status;
    labels_job job = {preds, target, mask, ignore_index, out->shape[0], 0, (int64_t *)out->data};
    return labels_run(&job, err);
}

tt_status tt_confmat_scores(const tt_view *out, const tt_view *preds, const tt_view *target,
                            const tt_view *mask, const int64_t *ignore_index, tt_error *err)
{
    if (tt_check_scores(preds, "preds", 2, err))
        return err->status;
    const int64_t classes = preds->shape[1];
    if (classes == 0 && preds->shape[0] > 0)
        return tt_fail(err, TT_EVALUE, "preds", "expected at least one class column, got [%lld, 0]",
                       (long long)preds->shape[0]);
    if (tt_check_square_out(out, classes, err) || tt_check_labels(target, "target", 1, err) ||
        tt_check_same_length(preds, "preds", target, err) ||
        tt_check_mask(mask, target->shape[0], err))
        return err->status;
    labels_job job = {preds, target, mask, ignore_index, classes, 1, (int64_t *)out->data};
    return labels_run(&job, err);
}
