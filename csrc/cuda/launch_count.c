/*
 * launch_count.c: the host side of the counting kernels (launch.h): confmat_labels,
 * confmat_scores, confmat_threshold, binned_update and topk_update. Each validates on the host
 * (device, then the CPU core's shape and dtype rules and messages) and returns there with
 * ctx->check_only; otherwise it runs the counting protocol, which keeps the contract "bad input
 * -> exception, out unchanged" for kernels that cannot raise, with no host synchronisation:
 *
 * A kernel meeting a bad sample skips it and lowers the call's device error record
 * (cuda_api.h). The kernels count straight into `out`; after them the same launch is enqueued
 * again with sign -1 and the record as its gate: on good input every block of that replay
 * returns at once, on bad input it removes exactly what the first pass added (it skips the same
 * samples; integer counts make this exact). So `out` ends unchanged on bad input without the
 * host ever reading the record during the call; the latch and the report are call.c's
 * (tt_cuda_call_report). confmat_threshold with logit_threshold (probabilities or logits?) is
 * decided the same way: a scan kernel writes the chosen threshold into the call's scratch,
 * where the count and its replay read it.
 * (The alternative, counting into a scratch matrix added only when clean, would zero, sum and
 * re-read C^2 int64 per call: 8 MB at C = 1000, more than the scores of a small batch.)
 */
#include "cuda/call.h"

typedef struct {
    const tt_view *out, *preds, *target, *mask, *thresholds;
    const int64_t *ignore_index;
    double threshold;
    int uniform;
    int64_t k;
    /* confmat_threshold: choose threshold / logit_threshold on the device (pick), the latter,
     * and the device double the pick kernel wrote (set by count_call) */
    int pick;
    double logit_threshold;
    const double *threshold_at;
} count_job;

typedef tt_cu_result (*count_launch)(const count_job *job, int64_t sign, tt_cuda_record *rec,
                                     const tt_cuda_queue *q);

static tt_status count_call(const tt_cuda_ctx *ctx, count_launch launch, const count_job *job,
                            const tt_cuda_latch_spec *spec, const tt_cuda_explain *why,
                            tt_error *err)
{
    tt_cuda_call c;
    tt_cu_result e;
    count_job j = *job; /* with the device threshold of a pick */
    tt_status status = tt_cuda_call_enter(&c, ctx, job->out->device_id, err);
    if (status == TT_OK)
        status = tt_cuda_earlier_rejection(c.device, job->out->data, err);
    if (status == TT_OK)
        status = tt_cuda_call_begin(&c, job->pick ? TT_CUDA_PICK_BYTES : 0, err);
    if (status != TT_OK)
        goto done;
    if (job->pick) { /* the chosen threshold stays in scratch for the count and its replay */
        double *chosen = (double *)c.scratch;
        if ((e = tt_cuda_threshold_pick_launch(job->preds, job->threshold, job->logit_threshold,
                                               chosen, (unsigned *)(c.scratch + sizeof(double)),
                                               &c.q)) != TT_CU_SUCCESS) {
            status = tt_cuda_fail(err, e, "a kernel launch");
            goto done;
        }
        j.threshold_at = chosen;
    }
    if ((e = launch(&j, +1, c.rec, &c.q)) != TT_CU_SUCCESS ||
        (e = launch(&j, -1, c.rec, &c.q)) != TT_CU_SUCCESS) {
        status = tt_cuda_fail(err, e, "a kernel launch");
        goto done;
    }
    status = tt_cuda_call_report(&c, job->out->data, spec, why, err);
done:
    tt_cuda_call_end(&c);
    return status;
}

static tt_cu_result launch_labels(const count_job *j, int64_t sign, tt_cuda_record *rec,
                                  const tt_cuda_queue *q)
{
    return tt_cuda_confmat_labels_launch(j->out, j->preds, j->target, j->mask, j->ignore_index,
                                         sign, rec, q);
}

static tt_cu_result launch_scores(const count_job *j, int64_t sign, tt_cuda_record *rec,
                                  const tt_cuda_queue *q)
{
    return tt_cuda_confmat_scores_launch(j->out, j->preds, j->target, j->mask, j->ignore_index,
                                         sign, rec, q);
}

static tt_cu_result launch_threshold(const count_job *j, int64_t sign, tt_cuda_record *rec,
                                     const tt_cuda_queue *q)
{
    return tt_cuda_confmat_threshold_launch(j->out, j->preds, j->target, j->mask, j->ignore_index,
                                            j->threshold, j->threshold_at, sign, rec, q);
}

static tt_cu_result launch_binned(const count_job *j, int64_t sign, tt_cuda_record *rec,
                                  const tt_cuda_queue *q)
{
    if (sign > 0) { /* the replay needs no second look at the thresholds */
        const tt_cu_result e = tt_cuda_thresholds_check_launch(j->thresholds, rec, q);
        if (e != TT_CU_SUCCESS)
            return e;
    }
    return tt_cuda_binned_launch(j->out, j->preds, j->target, j->mask, j->ignore_index,
                                 j->thresholds, j->uniform, sign, rec, q);
}

static tt_cu_result launch_topk(const count_job *j, int64_t sign, tt_cuda_record *rec,
                                const tt_cuda_queue *q)
{
    return tt_cuda_topk_launch(j->out, j->preds, j->target, j->mask, j->ignore_index, j->k, sign,
                               rec, q);
}

/* Where the latch finds a rejected label (cuda_api.h): target's, and preds' when preds are
 * labels. */
static tt_cuda_latch_spec latch_spec(const tt_view *target, const tt_view *preds_labels,
                                     int64_t columns, const tt_view *thresholds)
{
    tt_cuda_latch_spec spec;
    memset(&spec, 0, sizeof spec);
    spec.by_code[TT_CODE_TARGET] = target;
    spec.by_code[TT_CODE_PREDS] = preds_labels;
    spec.columns = columns;
    spec.thresholds = thresholds;
    return spec;
}

/* ---- confusion matrices --------------------------------------------------------------------- */

/* Device checks of the four tensors every counting kernel takes; copies into o, p, t, m. */
static tt_status label_devices(const tt_view *out, const tt_view *preds, const tt_view *target,
                               const tt_view *mask, tt_view *o, tt_view *p, tt_view *t, tt_view *m,
                               tt_error *err)
{
    tt_status status = tt_cuda_out(out, "out", o, err);
    if (status == TT_OK)
        status = tt_cuda_same_device(preds, "preds", out, "out", p, err);
    if (status == TT_OK)
        status = tt_cuda_same_device(target, "target", out, "out", t, err);
    if (status == TT_OK)
        status = tt_cuda_same_device(mask, "mask", out, "out", m, err);
    return status;
}

tt_status tt_cuda_confmat_labels(const tt_cuda_ctx *ctx, const tt_view *out, const tt_view *preds,
                                 const tt_view *target, const tt_view *mask,
                                 const int64_t *ignore_index, tt_error *err)
{
    tt_view o, p, t, m;
    if (label_devices(out, preds, target, mask, &o, &p, &t, &m, err))
        return err->status;
    if (o.ndim != 2)
        return tt_fail(err, TT_EVALUE, "out", "expected an int64 [C, C] matrix, got %d-D", o.ndim);
    if (tt_check_square_out(&o, o.shape[0], err) || tt_check_labels(&p, "preds", 1, err) ||
        tt_check_labels(&t, "target", 1, err) || tt_check_same_length(&p, "preds", &t, err) ||
        tt_check_mask(mask ? &m : NULL, t.shape[0], err))
        return err->status;
    if (ctx->check_only || t.shape[0] == 0)
        return TT_OK;
    const count_job job = {out, preds, target, mask, NULL, ignore_index, 0.0, 0, 0, 0, 0.0, NULL};
    const tt_cuda_latch_spec spec = latch_spec(target, preds, 1, NULL);
    const tt_cuda_explain why = {TT_EXPLAIN_SAMPLE, o.shape[0], 1, 0};
    return count_call(ctx, launch_labels, &job, &spec, &why, err);
}

tt_status tt_cuda_confmat_scores(const tt_cuda_ctx *ctx, const tt_view *out, const tt_view *preds,
                                 const tt_view *target, const tt_view *mask,
                                 const int64_t *ignore_index, tt_error *err)
{
    tt_view o, p, t, m;
    if (label_devices(out, preds, target, mask, &o, &p, &t, &m, err) ||
        tt_check_scores(&p, "preds", 2, err))
        return err->status;
    const int64_t classes = p.shape[1];
    if (classes == 0 && p.shape[0] > 0)
        return tt_fail(err, TT_EVALUE, "preds", "expected at least one class column, got [%lld, 0]",
                       (long long)p.shape[0]);
    if (tt_check_square_out(&o, classes, err) || tt_check_labels(&t, "target", 1, err) ||
        tt_check_same_length(&p, "preds", &t, err) ||
        tt_check_mask(mask ? &m : NULL, t.shape[0], err))
        return err->status;
    if (ctx->check_only || t.shape[0] == 0)
        return TT_OK;
    const count_job job = {out, preds, target, mask, NULL, ignore_index, 0.0, 0, 0, 0, 0.0, NULL};
    const tt_cuda_latch_spec spec = latch_spec(target, NULL, 1, NULL);
    const tt_cuda_explain why = {TT_EXPLAIN_SAMPLE, classes, 1, 0};
    return count_call(ctx, launch_scores, &job, &spec, &why, err);
}

tt_status tt_cuda_confmat_threshold(const tt_cuda_ctx *ctx, const tt_view *out,
                                    const tt_view *preds, const tt_view *target,
                                    const tt_view *mask, const int64_t *ignore_index,
                                    double threshold, const double *logit_threshold, tt_error *err)
{
    char got[96], want[96];
    tt_view o, p, t, m;
    if (label_devices(out, preds, target, mask, &o, &p, &t, &m, err))
        return err->status;
    if (p.ndim != 1 && p.ndim != 2)
        return tt_fail(err, TT_EVALUE, "preds", "expected a tensor [N] or [N, L], got %s",
                       tt_describe(&p, got, sizeof got));
    if (tt_check_labels(&t, "target", p.ndim, err))
        return err->status;
    if (t.shape[0] != p.shape[0] || (p.ndim == 2 && t.shape[1] != p.shape[1]))
        return tt_fail(err, TT_EVALUE, "target", "expected the shape of preds (%s), got %s",
                       tt_describe(&p, want, sizeof want), tt_describe(&t, got, sizeof got));
    if (threshold != threshold)
        return tt_fail(err, TT_EVALUE, "threshold", "expected a number, got NaN");
    if (logit_threshold != NULL && *logit_threshold != *logit_threshold)
        return tt_fail(err, TT_EVALUE, "logit_threshold", "expected a number, got NaN");
    const int64_t cols = p.ndim == 2 ? p.shape[1] : 1;
    const int64_t shape3[3] = {cols, 2, 2}, shape2[2] = {2, 2};
    if (p.ndim == 1 && o.ndim == 2) {
        if (tt_check_out(&o, "out", TT_I64, 2, shape2, err))
            return err->status;
    } else if (tt_check_out(&o, "out", TT_I64, 3, shape3, err)) {
        return err->status;
    }
    if (tt_check_mask(mask ? &m : NULL, p.shape[0], err))
        return err->status;
    if (ctx->check_only || p.shape[0] * cols == 0)
        return TT_OK;
    const int pick = logit_threshold != NULL && tt_is_float(p.dtype);
    const count_job job = {out,
                           preds,
                           target,
                           mask,
                           NULL,
                           ignore_index,
                           threshold,
                           0,
                           0,
                           pick,
                           pick ? *logit_threshold : 0.0,
                           NULL};
    const tt_cuda_latch_spec spec = latch_spec(target, preds, cols, NULL);
    const tt_cuda_explain why = {TT_EXPLAIN_THRESHOLD, 2, cols, 0};
    return count_call(ctx, launch_threshold, &job, &spec, &why, err);
}

/* ---- binned histograms ---------------------------------------------------------------------- */

tt_status tt_cuda_binned_update(const tt_cuda_ctx *ctx, const tt_view *out, const tt_view *preds,
                                const tt_view *target, const tt_view *mask,
                                const int64_t *ignore_index, const tt_view *thresholds, int uniform,
                                tt_error *err)
{
    char got[96], want[96];
    tt_view o, p, t, m, thr;
    if (label_devices(out, preds, target, mask, &o, &p, &t, &m, err) ||
        tt_cuda_same_device(thresholds, "thresholds", out, "out", &thr, err))
        return err->status;
    /* the CPU core's order: thresholds (values are checked on the device), shapes, mask */
    if (thr.dtype != TT_F64 || thr.ndim != 1)
        return tt_fail(err, thr.dtype != TT_F64 ? TT_ETYPE : TT_EVALUE, "thresholds",
                       "expected a float64 tensor [T], got %s", tt_describe(&thr, got, sizeof got));
    if (thr.shape[0] > 1 && thr.stride[0] != 1)
        return tt_fail(err, TT_EVALUE, "thresholds", "expected a contiguous tensor");
    if (p.ndim != 1 && p.ndim != 2)
        return tt_fail(err, TT_EVALUE, "preds", "expected scores [N] or [N, K], got %s",
                       tt_describe(&p, got, sizeof got));
    if (tt_check_scores(&p, "preds", p.ndim, err))
        return err->status;
    const int multiclass = p.ndim == 2 && t.ndim == 1;
    if (tt_check_labels(&t, "target", multiclass ? 1 : p.ndim, err))
        return err->status;
    if (t.shape[0] != p.shape[0] || (t.ndim == 2 && t.shape[1] != p.shape[1]))
        return tt_fail(err, TT_EVALUE, "target", "expected %s to match preds %s",
                       tt_describe(&t, got, sizeof got), tt_describe(&p, want, sizeof want));
    const int64_t cols = p.ndim == 2 ? p.shape[1] : 1;
    const int64_t shape[3] = {cols, thr.shape[0] + 1, 2};
    if (tt_check_out(&o, "out", TT_I64, 3, shape, err) ||
        tt_check_mask(mask ? &m : NULL, p.shape[0], err))
        return err->status;
    /* an empty batch still has its thresholds checked, as on the CPU */
    if (ctx->check_only || (p.shape[0] * cols == 0 && thr.shape[0] == 0))
        return TT_OK;
    const count_job job = {out, preds,   target, mask, thresholds, ignore_index,
                           0.0, uniform, 0,      0,    0.0,        NULL};
    const tt_cuda_latch_spec spec = latch_spec(target, NULL, cols, thresholds);
    const tt_cuda_explain why = {TT_EXPLAIN_BINNED, multiclass ? cols : 2, cols, multiclass};
    return count_call(ctx, launch_binned, &job, &spec, &why, err);
}

/* ---- top-k ---------------------------------------------------------------------------------- */

tt_status tt_cuda_topk_update(const tt_cuda_ctx *ctx, const tt_view *out, const tt_view *preds,
                              const tt_view *target, const tt_view *mask,
                              const int64_t *ignore_index, int64_t k, tt_error *err)
{
    tt_view o, p, t, m;
    if (label_devices(out, preds, target, mask, &o, &p, &t, &m, err) ||
        tt_check_scores(&p, "preds", 2, err) || tt_check_labels(&t, "target", 1, err))
        return err->status;
    const int64_t classes = p.shape[1];
    if (t.shape[0] != p.shape[0])
        return tt_fail(err, TT_EVALUE, "target", "expected %lld samples (as preds), got %lld",
                       (long long)p.shape[0], (long long)t.shape[0]);
    if (k < 1 || k > classes)
        return tt_fail(err, TT_EVALUE, "k",
                       "expected 1 <= k <= %lld (the number of classes), got %lld",
                       (long long)classes, (long long)k);
    const int64_t shape[2] = {classes, 3};
    if (tt_check_out(&o, "out", TT_I64, 2, shape, err) ||
        tt_check_mask(mask ? &m : NULL, p.shape[0], err))
        return err->status;
    if (ctx->check_only || p.shape[0] == 0)
        return TT_OK;
    const count_job job = {out, preds, target, mask, NULL, ignore_index, 0.0, 0, k, 0, 0.0, NULL};
    const tt_cuda_latch_spec spec = latch_spec(target, NULL, 1, NULL);
    const tt_cuda_explain why = {TT_EXPLAIN_SAMPLE, classes, 1, 0};
    return count_call(ctx, launch_topk, &job, &spec, &why, err);
}