/*
 * binned.c: per-threshold-bin counts of positives and negatives, the O(T) state behind binned
 * ROC, PR, AUROC and AP. Each score lands in one bin, the number of thresholds at or below it;
 * TP and FP at every threshold are suffix sums over bins, taken at compute time. Cost is
 * O(N*K) bin lookups plus O(T) memory: no N x T comparison matrix, unlike the torch-ops path.
 *
 * For evenly spaced thresholds the bin is computed arithmetically and then nudged against the
 * actual threshold values, so the result equals the binary search's to the last bit.
 */
#include "kernels/binned.h"

#include <math.h>

typedef struct {
    const tt_view *preds, *target, *mask;
    const int64_t *ignore_index;
    const double *thresholds;
    int64_t n_thresholds;
    int use_formula;      /* evenly spaced thresholds: direct index, then correction */
    double origin, scale; /* bin guess = (score - origin) * scale + 1 */
    int multiclass;       /* target holds class labels, one-vs-rest per column */
    int64_t *out;         /* [K, T + 1, 2] */
} binned_job;

/* Number of thresholds <= s (thresholds sorted ascending). */
static inline int64_t bin_by_search(const double *thresholds, int64_t count, double s)
{
    int64_t lo = 0, hi = count;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (thresholds[mid] <= s)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static inline int64_t bin_by_formula(const double *thr, int64_t count, double origin, double scale,
                                     double s)
{
    double guess = (s - origin) * scale + 1.0;
    int64_t b = !(guess > 0.0) ? 0 : guess >= (double)count ? count : (int64_t)guess;
    while (b < count && thr[b] <= s)
        b++;
    while (b > 0 && thr[b - 1] > s)
        b--;
    return b;
}

static int binned_walk(const binned_job *job, int64_t sign, tt_position stop, tt_position *bad,
                       tt_error *err)
{
    int64_t targets[TT_CHUNK];
    double scores[TT_CHUNK];
    uint8_t keep[TT_CHUNK];
    const tt_view *preds = job->preds;
    const int64_t rows = preds->shape[0];
    const int64_t cols = preds->ndim == 2 ? preds->shape[1] : 1;
    const int64_t bins = job->n_thresholds + 1;
    const int has_ignore = job->ignore_index != NULL;
    const int64_t ignore = has_ignore ? *job->ignore_index : 0;
    /* locals, not job->...: stores into the histogram could alias the job's fields, which would
     * make the compiler reload them for every sample */
    const double *thr = job->thresholds;
    const int64_t count = job->n_thresholds;
    const double origin = job->origin, scale = job->scale;
    const int use_formula = job->use_formula, multiclass = job->multiclass;

    for (int64_t start = 0; start < rows; start += TT_CHUNK) {
        const int64_t n = rows - start < TT_CHUNK ? rows - start : TT_CHUNK;
        tt_load_keep(job->mask, start, n, keep);
        if (job->multiclass)
            tt_load_labels(job->target, start, n, 0, targets);
        for (int64_t col = 0; col < cols; col++) {
            if (!job->multiclass)
                tt_load_labels(job->target, start, n, col, targets);
            const int64_t nan_at = tt_load_scores(preds, start, n, col, scores);
            int64_t *hist = job->out + col * bins * 2;
            const int64_t visit = tt_rows_before(start, n, col, stop);
            for (int64_t i = 0; i < visit; i++) {
                const int64_t row = start + i;
                if (i == nan_at)
                    return tt_walk_stop(bad, (tt_position){row, col}, sign, err, "preds",
                                        "NaN at sample %lld, column %lld%s", (long long)row,
                                        (long long)col, multiclass ? TT_BINNED_NAN_NOTE : "");
                const int64_t t = targets[i];
                /* bitwise, not ||: a branch on the random label would mispredict half the time */
                if ((keep[i] == 0) | (has_ignore & (t == ignore)))
                    continue;
                const int64_t limit = multiclass ? cols : 2;
                if ((uint64_t)t >= (uint64_t)limit)
                    return tt_walk_stop(bad, (tt_position){row, col}, sign, err, "target",
                                        "label %lld at sample %lld is out of range [0, %lld)",
                                        (long long)t, (long long)row, (long long)limit);
                const int64_t positive = multiclass ? t == col : t;
                const int64_t b = use_formula ? bin_by_formula(thr, count, origin, scale, scores[i])
                                              : bin_by_search(thr, count, scores[i]);
                hist[b * 2 + positive] += sign;
            }
            if (visit < n)
                return 0; /* reached `stop` */
        }
    }
    return 0;
}

static tt_status check_thresholds(const tt_view *thr, tt_error *err)
{
    char got[96];
    if (thr->dtype != TT_F64 || thr->ndim != 1)
        return tt_fail(err, thr->dtype != TT_F64 ? TT_ETYPE : TT_EVALUE, "thresholds",
                       "expected a float64 tensor [T], got %s", tt_describe(thr, got, sizeof got));
    if (thr->shape[0] > 1 && thr->stride[0] != 1)
        return tt_fail(err, TT_EVALUE, "thresholds", "expected a contiguous tensor");
    if (tt_check_cpu(thr, "thresholds", err))
        return err->status;
    const double *v = (const double *)thr->data;
    for (int64_t i = 0; i < thr->shape[0]; i++) {
        if (v[i] != v[i])
            return tt_fail(err, TT_EVALUE, "thresholds", "NaN at index %lld", (long long)i);
        if (i > 0 && v[i] < v[i - 1])
            return tt_fail(err, TT_EVALUE, "thresholds",
                           "expected non-decreasing values, got %g after %g at index %lld", v[i],
                           v[i - 1], (long long)i);
    }
    return TT_OK;
}

static tt_status check_shapes(const tt_view *out, const tt_view *preds, const tt_view *target,
                              int64_t n_thresholds, int *multiclass, tt_error *err)
{
    char got[96], want[96];
    if (preds->ndim != 1 && preds->ndim != 2)
        return tt_fail(err, TT_EVALUE, "preds", "expected scores [N] or [N, K], got %s",
                       tt_describe(preds, got, sizeof got));
    if (tt_check_scores(preds, "preds", preds->ndim, err))
        return err->status;
    *multiclass = preds->ndim == 2 && target->ndim == 1;
    if (tt_check_labels(target, "target", *multiclass ? 1 : preds->ndim, err))
        return err->status;
    if (target->shape[0] != preds->shape[0] ||
        (target->ndim == 2 && target->shape[1] != preds->shape[1]))
        return tt_fail(err, TT_EVALUE, "target", "expected %s to match preds %s",
                       tt_describe(target, got, sizeof got), tt_describe(preds, want, sizeof want));
    const int64_t shape[3] = {preds->ndim == 2 ? preds->shape[1] : 1, n_thresholds + 1, 2};
    return tt_check_out(out, "out", TT_I64, 3, shape, err);
}

tt_status tt_binned_update(const tt_view *out, const tt_view *preds, const tt_view *target,
                           const tt_view *mask, const int64_t *ignore_index,
                           const tt_view *thresholds, int uniform, tt_error *err)
{
    int multiclass = 0;
    if (check_thresholds(thresholds, err) ||
        check_shapes(out, preds, target, thresholds->shape[0], &multiclass, err) ||
        tt_check_mask(mask, preds->shape[0], err))
        return err->status;

    const double *thr = (const double *)thresholds->data;
    const int64_t count = thresholds->shape[0];
    binned_job job = {preds, target, mask,       ignore_index,        thr, count, 0,
                      0.0,   0.0,    multiclass, (int64_t *)out->data};
    if (uniform && count >= 2 && thr[count - 1] > thr[0]) {
        job.origin = thr[0];
        job.scale = (double)(count - 1) / (thr[count - 1] - thr[0]);
        /* infinite ends or a tiny span give no usable formula: binary search instead */
        job.use_formula = isfinite(job.origin) && isfinite(job.scale) && job.scale > 0.0;
    }
    tt_position bad;
    if (!binned_walk(&job, +1, TT_WALK_ALL, &bad, err))
        return TT_OK;
    binned_walk(&job, -1, bad, &bad, err);
    return err->status;
}
