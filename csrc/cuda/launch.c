/*
 * launch.c: the host side of the CUDA kernels (launch.h): validation, device and stream, the
 * per-device workspace, and the protocol that keeps the contract "bad input -> exception, state
 * unchanged" for kernels that cannot raise.
 *
 * No host synchronisation in an update. A kernel meeting a bad sample skips it and lowers the
 * call's device error record (cuda_api.h). Counting kernels count straight into `out`; after
 * them the same launch is enqueued again with sign -1 and the record as its gate: on good input
 * every block of that replay returns at once, on bad input it removes exactly what the first
 * pass added (it skips the same samples; integer counts make this exact). Moments reduce the
 * batch into scratch and a merge gated on the record adds it to the state. So `out` / `state`
 * end unchanged on bad input without the host ever reading the record during the call.
 * confmat_threshold with logit_threshold (probabilities or logits?) is decided the same way: a
 * scan kernel writes the chosen threshold into the call's scratch, where the count and its
 * replay read it.
 * (The alternative, counting into a scratch matrix added only when clean, would zero, sum and
 * re-read C^2 int64 per call: 8 MB at C = 1000, more than the scores of a small batch.)
 *
 * The exception. A one-thread latch kernel copies the record and the rejected element into a
 * pinned report slot, and pending.c keeps the call in flight. Deferred checks (the default)
 * raise a rejected call's ValueError at the next update into the same state (before running
 * that update) or when the metric asks with wait (compute), with the CPU core's message;
 * immediate checks (ctx->immediate) wait for the call's own latch and raise at the call: one
 * host synchronisation per update, as torch's reference path pays anyway.
 *
 * One workspace per device holds the record and the moments scratch, under a mutex held from
 * the record's reset to the latch. A cudaEvent recorded after each call's last kernel makes the
 * next call's stream wait for it on the device: no host wait.
 */
#include "launch.h"
#include "pending.h"

#include <pthread.h>

#include "../dlpack_abi.h"

#define MAX_DEVICES 64
#define RECORD_BYTES 256 /* the record, padded so that the scratch after it stays aligned */
#define MIN_WORKSPACE ((size_t)1 << 20)

typedef struct {
    pthread_mutex_t lock;
    char *buffer; /* device memory: [record | scratch] */
    size_t size;
    cudaEvent_t last_use;
    int has_event;
} workspace;

static workspace workspaces[MAX_DEVICES];
static pthread_once_t workspaces_once = PTHREAD_ONCE_INIT;

static void init_workspaces(void)
{
    for (int i = 0; i < MAX_DEVICES; i++)
        pthread_mutex_init(&workspaces[i].lock, NULL);
}

/* ---- errors --------------------------------------------------------------------------------- */

static tt_status cuda_fail(tt_error *err, cudaError_t e, const char *what)
{
    const tt_status status = e == cudaErrorMemoryAllocation ? TT_ENOMEM : TT_ECUDA;
    return tt_fail(err, status, "CUDA", "%s failed: %s (%s)", what, cudaGetErrorName(e),
                   cudaGetErrorString(e));
}

static const char *device_name(int32_t device_type)
{
    switch (device_type) {
    case TT_DL_CPU: return "the CPU";
    case TT_DL_CUDA_HOST: return "pinned CPU memory";
    case 13: return "CUDA managed memory";
    default: return "another device";
    }
}

/* `out` must be a CUDA tensor; *copy is `out` with its device masked as the CPU, for the CPU
 * core's shape and dtype checks (which also test residency). */
static tt_status cuda_out(const tt_view *out, const char *arg, tt_view *copy, tt_error *err)
{
    if (out->device_type != TT_DL_CUDA)
        return tt_fail(err, TT_EVALUE, arg,
                       "expected a CUDA tensor, got one on %s (DLPack device type %d); "
                       "CPU tensors go to torchtally._C",
                       device_name(out->device_type), (int)out->device_type);
    *copy = *out;
    copy->device_type = TT_DL_CPU;
    return TT_OK;
}

/* `v` (NULL: an absent optional argument) must sit on the CUDA device of `out`. */
static tt_status same_device(const tt_view *v, const char *arg, const tt_view *out,
                             const char *out_arg, tt_view *copy, tt_error *err)
{
    if (v == NULL)
        return TT_OK;
    if (v->device_type != TT_DL_CUDA)
        return tt_fail(err, TT_EVALUE, arg,
                       "expected a CUDA tensor on cuda:%d (the device of %s), got one on %s "
                       "(DLPack device type %d)",
                       (int)out->device_id, out_arg, device_name(v->device_type),
                       (int)v->device_type);
    if (v->device_id != out->device_id)
        return tt_fail(err, TT_EVALUE, arg,
                       "expected a tensor on cuda:%d (the device of %s), got one on cuda:%d",
                       (int)out->device_id, out_arg, (int)v->device_id);
    *copy = *v;
    copy->device_type = TT_DL_CPU;
    return TT_OK;
}

/* ---- one call: device, workspace, record ------------------------------------------------- */

typedef struct {
    const tt_cuda_ctx *ctx;
    int device, previous_device, switched, locked;
    workspace *ws;
    tt_cuda_record *rec;    /* device */
    char *scratch;          /* device, after the record */
    tt_cuda_report *report; /* the call's report slot, as the device sees it (pending.h) */
} cuda_call;

static tt_status call_enter(cuda_call *c, const tt_cuda_ctx *ctx, int device, tt_error *err)
{
    memset(c, 0, sizeof *c);
    c->ctx = ctx;
    c->device = device;
    (void)cudaGetLastError(); /* a stale launch error of another library must not be blamed on ours */
    if (device < 0 || device >= MAX_DEVICES)
        return tt_fail(err, TT_EVALUE, "out", "CUDA device %d is beyond the %d devices supported",
                       device, MAX_DEVICES);
    cudaError_t e = cudaGetDevice(&c->previous_device);
    if (e != cudaSuccess)
        return cuda_fail(err, e, "cudaGetDevice");
    if (c->previous_device != device) {
        if ((e = cudaSetDevice(device)) != cudaSuccess)
            return cuda_fail(err, e, "cudaSetDevice");
        c->switched = 1;
    }
    return TT_OK;
}

/* Locks the device's workspace, makes room for `scratch` bytes and clears the record. */
static tt_status call_begin(cuda_call *c, size_t scratch, tt_error *err)
{
    pthread_once(&workspaces_once, init_workspaces);
    workspace *ws = &workspaces[c->device];
    pthread_mutex_lock(&ws->lock);
    c->ws = ws;
    c->locked = 1;
    cudaError_t e;
    if (!ws->has_event) {
        if ((e = cudaEventCreateWithFlags(&ws->last_use, cudaEventDisableTiming)) != cudaSuccess)
            return cuda_fail(err, e, "cudaEventCreate");
        ws->has_event = 1;
    } else if ((e = cudaStreamWaitEvent(c->ctx->stream, ws->last_use, 0)) != cudaSuccess) {
        return cuda_fail(err, e, "cudaStreamWaitEvent");
    }
    const size_t need = RECORD_BYTES + scratch;
    if (need > ws->size) {
        if (ws->buffer != NULL) { /* cudaFree waits for the device: only when the scratch grows */
            cudaFree(ws->buffer);
            ws->buffer = NULL;
            ws->size = 0;
        }
        const size_t size = need < MIN_WORKSPACE ? MIN_WORKSPACE : need;
        if ((e = cudaMalloc((void **)&ws->buffer, size)) != cudaSuccess) {
            ws->buffer = NULL;
            return cuda_fail(err, e, "cudaMalloc of the kernel workspace");
        }
        ws->size = size;
    }
    c->rec = (tt_cuda_record *)ws->buffer;
    c->scratch = ws->buffer + RECORD_BYTES;
    if ((e = cudaMemsetAsync(c->rec, 0xff, sizeof(tt_cuda_record), c->ctx->stream)) != cudaSuccess)
        return cuda_fail(err, e, "clearing the error record");
    return tt_pending_slot(c->device, &c->report, err);
}

/* After the call's kernels: the latch into the report slot, the call in flight, and with
 * immediate checks the wait for it (the one host synchronisation, on request only). */
static tt_status call_report(cuda_call *c, const void *out, const tt_cuda_latch_spec *spec,
                             const tt_cuda_explain *why, tt_error *err)
{
    const cudaError_t e = tt_cuda_latch_launch(c->rec, spec, c->report, c->ctx->stream);
    if (e != cudaSuccess)
        return cuda_fail(err, e, "the error report's launch");
    if (tt_pending_push(c->device, out, why, c->ctx->stream, err))
        return err->status;
    const tt_span mine = {out, 1};
    return c->ctx->immediate ? tt_pending_check(c->device, mine, 1, TT_PENDING_AT_CALL, err) : TT_OK;
}

static void call_end(cuda_call *c)
{
    if (c->locked) {
        cudaEventRecord(c->ws->last_use, c->ctx->stream); /* a failure here shows at the next call */
        pthread_mutex_unlock(&c->ws->lock);
    }
    if (c->switched)
        cudaSetDevice(c->previous_device);
}

/* ---- the counting protocol: count, undo gated on the record, report ------------------------ */

typedef struct {
    const tt_view *out, *preds, *target, *mask, *thresholds;
    const int64_t *ignore_index;
    double threshold;
    int uniform;
    int64_t k;
    int pick;                   /* confmat_threshold: choose threshold / logit_threshold on the device */
    double logit_threshold;     /* ... the latter (with pick) */
    const double *threshold_at; /* ... the device double the pick kernel wrote (set by count_call) */
} count_job;

typedef cudaError_t (*count_launch)(const count_job *job, int64_t sign, tt_cuda_record *rec,
                                    cudaStream_t stream);

/* A rejected earlier update into `out`, found without waiting: raised before this call runs. */
static tt_status earlier_rejection(int device, const void *out, tt_error *err)
{
    const tt_span state = {out, 1};
    return tt_pending_check(device, state, 0, TT_PENDING_AT_UPDATE, err);
}

static tt_status count_call(const tt_cuda_ctx *ctx, count_launch launch, const count_job *job,
                            const tt_cuda_latch_spec *spec, const tt_cuda_explain *why,
                            tt_error *err)
{
    cuda_call c;
    cudaError_t e;
    count_job j = *job; /* with the device threshold of a pick */
    tt_status status = call_enter(&c, ctx, job->out->device_id, err);
    if (status == TT_OK)
        status = earlier_rejection(c.device, job->out->data, err);
    if (status == TT_OK)
        status = call_begin(&c, job->pick ? TT_CUDA_PICK_BYTES : 0, err);
    if (status != TT_OK)
        goto done;
    if (job->pick) { /* the chosen threshold stays in scratch for the count and its replay */
        double *chosen = (double *)c.scratch;
        if ((e = tt_cuda_threshold_pick_launch(job->preds, job->threshold, job->logit_threshold, chosen,
                                               (unsigned *)(c.scratch + sizeof(double)),
                                               ctx->stream)) != cudaSuccess) {
            status = cuda_fail(err, e, "a kernel launch");
            goto done;
        }
        j.threshold_at = chosen;
    }
    if ((e = launch(&j, +1, c.rec, ctx->stream)) != cudaSuccess ||
        (e = launch(&j, -1, c.rec, ctx->stream)) != cudaSuccess) {
        status = cuda_fail(err, e, "a kernel launch");
        goto done;
    }
    status = call_report(&c, job->out->data, spec, why, err);
done:
    call_end(&c);
    return status;
}

static cudaError_t launch_labels(const count_job *j, int64_t sign, tt_cuda_record *rec, cudaStream_t s)
{
    return tt_cuda_confmat_labels_launch(j->out, j->preds, j->target, j->mask, j->ignore_index,
                                         sign, rec, s);
}

static cudaError_t launch_scores(const count_job *j, int64_t sign, tt_cuda_record *rec, cudaStream_t s)
{
    return tt_cuda_confmat_scores_launch(j->out, j->preds, j->target, j->mask, j->ignore_index,
                                         sign, rec, s);
}

static cudaError_t launch_threshold(const count_job *j, int64_t sign, tt_cuda_record *rec,
                                    cudaStream_t s)
{
    return tt_cuda_confmat_threshold_launch(j->out, j->preds, j->target, j->mask, j->ignore_index,
                                            j->threshold, j->threshold_at, sign, rec, s);
}

static cudaError_t launch_binned(const count_job *j, int64_t sign, tt_cuda_record *rec, cudaStream_t s)
{
    if (sign > 0) { /* the replay needs no second look at the thresholds */
        const cudaError_t e = tt_cuda_thresholds_check_launch(j->thresholds, rec, s);
        if (e != cudaSuccess)
            return e;
    }
    return tt_cuda_binned_launch(j->out, j->preds, j->target, j->mask, j->ignore_index,
                                 j->thresholds, j->uniform, sign, rec, s);
}

static cudaError_t launch_topk(const count_job *j, int64_t sign, tt_cuda_record *rec, cudaStream_t s)
{
    return tt_cuda_topk_launch(j->out, j->preds, j->target, j->mask, j->ignore_index, j->k, sign,
                               rec, s);
}

/* Where the latch finds a rejected label (cuda_api.h): target's, and preds' when preds are labels. */
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
    if (cuda_out(out, "out", o, err) || same_device(preds, "preds", out, "out", p, err) ||
        same_device(target, "target", out, "out", t, err) ||
        same_device(mask, "mask", out, "out", m, err))
        return err->status;
    return TT_OK;
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
        tt_check_same_length(&p, "preds", &t, err) || tt_check_mask(mask ? &m : NULL, t.shape[0], err))
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
                                    double threshold, const double *logit_threshold,
                                    tt_error *err)
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
    const count_job job = {out, preds, target, mask, NULL, ignore_index, threshold, 0, 0,
                           pick, pick ? *logit_threshold : 0.0, NULL};
    const tt_cuda_latch_spec spec = latch_spec(target, preds, cols, NULL);
    const tt_cuda_explain why = {TT_EXPLAIN_THRESHOLD, 2, cols, 0};
    return count_call(ctx, launch_threshold, &job, &spec, &why, err);
}

/* ---- binned histograms ---------------------------------------------------------------------- */

tt_status tt_cuda_binned_update(const tt_cuda_ctx *ctx, const tt_view *out, const tt_view *preds,
                                const tt_view *target, const tt_view *mask,
                                const int64_t *ignore_index, const tt_view *thresholds,
                                int uniform, tt_error *err)
{
    char got[96], want[96];
    tt_view o, p, t, m, thr;
    if (label_devices(out, preds, target, mask, &o, &p, &t, &m, err) ||
        same_device(thresholds, "thresholds", out, "out", &thr, err))
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
    const count_job job = {out, preds, target, mask, thresholds, ignore_index, 0.0, uniform, 0,
                           0, 0.0, NULL};
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
        return tt_fail(err, TT_EVALUE, "k", "expected 1 <= k <= %lld (the number of classes), got %lld",
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

/* ---- moments -------------------------------------------------------------------------------- */

static int64_t columns_of(const tt_view *x) { return x->ndim == 2 ? x->shape[1] : 1; }

static tt_status check_state(const tt_view *state, int64_t columns, tt_error *err)
{
    const int64_t shape[2] = {columns, 6};
    return tt_check_out(state, "state", TT_F64, 2, shape, err);
}

/* Batch into scratch, merge into the state gated on the record, report. */
static tt_status moments_call(const tt_cuda_ctx *ctx, const tt_view *state, const tt_view *x,
                              const tt_view *second, int co, tt_error *err)
{
    const int64_t rows = x->shape[0], columns = columns_of(x);
    if (rows == 0 || columns == 0)
        return TT_OK; /* an empty batch merges as a no-op */
    cuda_call c;
    cudaError_t e;
    tt_status status = call_enter(&c, ctx, state->device_id, err);
    if (status == TT_OK)
        status = earlier_rejection(c.device, state->data, err);
    if (status != TT_OK)
        goto done;
    const size_t batch_bytes = ((size_t)columns * 6 * sizeof(double) + 255) & ~(size_t)255;
    const size_t partial_bytes = tt_cuda_moments_scratch_bytes(rows, columns, c.device);
    if ((status = call_begin(&c, batch_bytes + partial_bytes, err)) != TT_OK)
        goto done;
    double *batch = (double *)c.scratch, *partials = (double *)(c.scratch + batch_bytes);
    e = co ? tt_cuda_comoments_batch_launch(x, second, columns, partials, batch, c.rec, ctx->stream)
           : tt_cuda_moments_batch_launch(x, second, columns, partials, batch, c.rec, ctx->stream);
    if (e != cudaSuccess) {
        status = cuda_fail(err, e, "a kernel launch");
        goto done;
    }
    tt_view bv;
    memset(&bv, 0, sizeof bv);
    bv.data = (char *)batch;
    bv.dtype = TT_F64;
    bv.ndim = 2;
    bv.shape[0] = columns;
    bv.shape[1] = 6;
    bv.stride[0] = 6;
    bv.stride[1] = 1;
    bv.device_type = TT_DL_CUDA;
    bv.device_id = c.device;
    e = co ? tt_cuda_comoments_merge_launch(state, &bv, c.rec, ctx->stream)
           : tt_cuda_moments_merge_launch(state, &bv, c.rec, ctx->stream);
    if (e != cudaSuccess) {
        status = cuda_fail(err, e, "the state merge");
        goto done;
    }
    tt_cuda_latch_spec spec;
    memset(&spec, 0, sizeof spec);
    spec.by_code[TT_CODE_WEIGHT] = co ? NULL : second;
    spec.columns = columns;
    const tt_cuda_explain why = {TT_EXPLAIN_MOMENTS, 0, columns, 0};
    status = call_report(&c, state->data, &spec, &why, err);
done:
    call_end(&c);
    return status;
}

tt_status tt_cuda_moments_update(const tt_cuda_ctx *ctx, const tt_view *state, const tt_view *x,
                                 const tt_view *weights, tt_error *err)
{
    char got[96];
    tt_view s, xv, w;
    if (cuda_out(state, "state", &s, err) || same_device(x, "x", state, "state", &xv, err) ||
        same_device(weights, "weights", state, "state", &w, err))
        return err->status;
    if (tt_check_values(&xv, "x", err) || check_state(&s, columns_of(&xv), err))
        return err->status;
    if (weights != NULL) {
        if (tt_check_scores(&w, "weights", 1, err))
            return err->status;
        if (w.shape[0] != xv.shape[0])
            return tt_fail(err, TT_EVALUE, "weights", "expected [%lld] (one per sample), got %s",
                           (long long)xv.shape[0], tt_describe(&w, got, sizeof got));
    }
    if (ctx->check_only)
        return TT_OK;
    return moments_call(ctx, state, x, weights, 0, err);
}

tt_status tt_cuda_comoments_update(const tt_cuda_ctx *ctx, const tt_view *state, const tt_view *x,
                                   const tt_view *y, tt_error *err)
{
    char got[96], want[96];
    tt_view s, xv, yv;
    if (cuda_out(state, "state", &s, err) || same_device(x, "x", state, "state", &xv, err) ||
        same_device(y, "y", state, "state", &yv, err))
        return err->status;
    if (tt_check_values(&xv, "x", err) || tt_check_values(&yv, "y", err))
        return err->status;
    if (xv.ndim != yv.ndim || xv.shape[0] != yv.shape[0] || columns_of(&xv) != columns_of(&yv))
        return tt_fail(err, TT_EVALUE, "y", "expected the shape of x (%s), got %s",
                       tt_describe(&xv, want, sizeof want), tt_describe(&yv, got, sizeof got));
    if (check_state(&s, columns_of(&xv), err))
        return err->status;
    if (ctx->check_only)
        return TT_OK;
    return moments_call(ctx, state, x, y, 1, err);
}

/* Merges read nothing back: launch on the stream and return. */
static tt_status merge_call(const tt_cuda_ctx *ctx, const tt_view *state, const tt_view *other,
                            int co, tt_error *err)
{
    char got[96];
    tt_view s, o;
    if (cuda_out(state, "state", &s, err) || same_device(other, "other", state, "state", &o, err))
        return err->status;
    if (o.dtype != TT_F64 || o.ndim != 2 || o.shape[1] != 6)
        return tt_fail(err, o.dtype != TT_F64 ? TT_ETYPE : TT_EVALUE, "other",
                       "expected a float64 state [D, 6], got %s", tt_describe(&o, got, sizeof got));
    if (check_state(&s, o.shape[0], err))
        return err->status;
    if (ctx->check_only || o.shape[0] == 0)
        return TT_OK;
    cuda_call c;
    tt_status status = call_enter(&c, ctx, state->device_id, err);
    if (status == TT_OK) {
        const cudaError_t e = co ? tt_cuda_comoments_merge_launch(state, other, NULL, ctx->stream)
                                 : tt_cuda_moments_merge_launch(state, other, NULL, ctx->stream);
        if (e != cudaSuccess)
            status = cuda_fail(err, e, "the state merge");
    }
    call_end(&c);
    return status;
}

tt_status tt_cuda_moments_merge(const tt_cuda_ctx *ctx, const tt_view *state,
                                const tt_view *other, tt_error *err)
{
    return merge_call(ctx, state, other, 0, err);
}

tt_status tt_cuda_comoments_merge(const tt_cuda_ctx *ctx, const tt_view *state,
                                  const tt_view *other, tt_error *err)
{
    return merge_call(ctx, state, other, 1, err);
}

/* ---- deferred checks ------------------------------------------------------------------------ */

tt_status tt_cuda_check(int device, const void *begin, size_t bytes, int wait, tt_error *err)
{
    if (!tt_pending_known(device))
        return TT_OK; /* no update ever ran on that device: nothing to check, no CUDA call */
    int previous = 0;
    cudaError_t e = cudaGetDevice(&previous);
    if (e == cudaSuccess && previous != device)
        e = cudaSetDevice(device); /* the events belong to that device */
    if (e != cudaSuccess)
        return cuda_fail(err, e, "cudaSetDevice");
    const tt_span span = {begin, bytes};
    const tt_status status = tt_pending_check(device, span, wait, TT_PENDING_AT_CHECK, err);
    if (previous != device)
        cudaSetDevice(previous);
    return status;
}

void tt_cuda_discard(int device, const void *begin, size_t bytes)
{
    const tt_span span = {begin, bytes};
    tt_pending_discard(device, span);
}
