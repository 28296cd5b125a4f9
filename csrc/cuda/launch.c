/*
 * launch.c: the host side of the CUDA kernels (launch.h): validation, device and stream, the
 * per-device workspace, and the protocol that keeps the contract "bad input -> exception, state
 * unchanged" for kernels that cannot raise.
 *
 * Why one synchronisation per update. A kernel meeting a bad sample skips it and lowers the
 * call's device error record (cuda_api.h). Raising at the call, as csrc/API.md asks, needs that
 * record on the host: a 16-byte device-to-host copy, which waits for the update's kernels.
 * Deferring it (raise at the next call, or at compute) would leave updates fully asynchronous
 * but would report a bad batch late and away from the call that made it; torchtally takes the
 * copy. It costs O(10 us) per update; peers pay as much or more for their own value checks
 * (torchmetrics' validate_args, torchtally's torch reference: several syncs per update).
 *
 * Given the copy, there are two ways to leave `out` unchanged on error: count into a per-call
 * scratch matrix and add it to `out` only when the record is clear, or count straight into
 * `out` and, on error, replay the call with sign -1 (the kernels skip exactly the same samples,
 * so the replay removes exactly what was added; integer counts make this exact). The replay
 * costs nothing on good input, where the scratch would be zeroed, summed and re-read on every
 * call (C^2 int64: 8 MB at C = 1000, more than the scores of a small batch), so counting
 * kernels replay. Moments reduce the batch into scratch anyway, and merge it only when clear.
 *
 * One workspace per device holds the record and the moments scratch, under a mutex held from
 * the record's reset to its read. A cudaEvent recorded after each call's last kernel makes the
 * next call's stream wait for it on the device (a moments merge may still be reading the
 * scratch when the mutex is released): no host wait.
 */
#include "launch.h"

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
    tt_cuda_record *rec; /* device */
    char *scratch;       /* device, after the record */
} cuda_call;

static tt_status call_enter(cuda_call *c, const tt_cuda_ctx *ctx, int device, tt_error *err)
{
    memset(c, 0, sizeof *c);
    c->ctx = ctx;
    c->device = device;
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
    return TT_OK;
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

/* The record, on the host: the one synchronisation of an update. */
static tt_status read_record(const cuda_call *c, tt_cuda_record *found, tt_error *err)
{
    cudaError_t e = cudaMemcpyAsync(found, c->rec, sizeof *found, cudaMemcpyDeviceToHost,
                                    c->ctx->stream);
    if (e == cudaSuccess)
        e = cudaStreamSynchronize(c->ctx->stream);
    return e == cudaSuccess ? TT_OK : cuda_fail(err, e, "an update's kernels");
}

/* One element of `v` at (row, col), copied to the host; only ever after an error. */
typedef union {
    int64_t i;
    double d;
    char bytes[8];
} element;

static tt_status read_element(const tt_view *v, int64_t row, int64_t col, cudaStream_t stream,
                              element *out, tt_error *err)
{
    memset(out, 0, sizeof *out);
    const int64_t offset = row * tt_step(v, 0) + (v->ndim == 2 ? col * tt_step(v, 1) : 0);
    cudaError_t e = cudaMemcpyAsync(out->bytes, v->data + offset, tt_dtype_size(v->dtype),
                                    cudaMemcpyDeviceToHost, stream);
    if (e == cudaSuccess)
        e = cudaStreamSynchronize(stream);
    return e == cudaSuccess ? TT_OK : cuda_fail(err, e, "reading a rejected value");
}

static tt_status label_at(const tt_view *v, int64_t row, int64_t col, cudaStream_t stream,
                          long long *label, tt_error *err)
{
    element value;
    if (read_element(v, row, col, stream, &value, err))
        return err->status;
    *label = (long long)tt_load_label(value.bytes, v->dtype);
    return TT_OK;
}

static tt_status score_at(const tt_view *v, int64_t row, int64_t col, cudaStream_t stream,
                          double *score, tt_error *err)
{
    element value;
    if (read_element(v, row, col, stream, &value, err))
        return err->status;
    *score = tt_load_score(value.bytes, v->dtype);
    return TT_OK;
}

/* ---- the counting protocol: count, read the record, replay with sign -1 on error ---------- */

typedef struct {
    const tt_view *out, *preds, *target, *mask, *thresholds;
    const int64_t *ignore_index;
    double threshold;
    int uniform;
    int64_t k;
    int64_t classes; /* the label range of target (and of preds labels) */
    int64_t columns; /* columns of preds: positions are row * columns + column */
} count_job;

typedef cudaError_t (*count_launch)(const count_job *job, int64_t sign, tt_cuda_record *rec,
                                    cudaStream_t stream);
typedef tt_status (*count_explain)(const count_job *job, const tt_cuda_record *found,
                                   cudaStream_t stream, tt_error *err);

static tt_status count_call(const tt_cuda_ctx *ctx, count_launch launch, count_explain explain,
                            const count_job *job, tt_error *err)
{
    cuda_call c;
    tt_cuda_record found;
    cudaError_t e;
    tt_status status = call_enter(&c, ctx, job->out->device_id, err);
    if (status == TT_OK)
        status = call_begin(&c, 0, err);
    if (status != TT_OK)
        goto done;
    if ((e = launch(job, +1, c.rec, ctx->stream)) != cudaSuccess) {
        status = cuda_fail(err, e, "a kernel launch");
        goto done;
    }
    if ((status = read_record(&c, &found, err)) != TT_OK)
        goto done;
    if (found.key == TT_CUDA_CLEAR && found.thr_key == TT_CUDA_CLEAR)
        goto done;
    if ((e = launch(job, -1, NULL, ctx->stream)) != cudaSuccess) {
        status = cuda_fail(err, e, "undoing a rejected update");
        goto done;
    }
    status = explain(job, &found, ctx->stream, err);
done:
    call_end(&c);
    return status;
}

/* Per-sample kernels (confmat_labels, confmat_scores, topk): the key's position is the row. */
static tt_status explain_sample(const count_job *job, const tt_cuda_record *found,
                                cudaStream_t stream, tt_error *err)
{
    const long long row = TT_CUDA_KEY_POS(found->key);
    const int code = TT_CUDA_KEY_CODE(found->key);
    if (code == TT_CODE_NAN)
        return tt_fail(err, TT_EVALUE, "preds", "NaN in the scores of sample %lld", row);
    const int is_target = code == TT_CODE_TARGET;
    long long label;
    if (label_at(is_target ? job->target : job->preds, row, 0, stream, &label, err))
        return err->status;
    return tt_fail(err, TT_EVALUE, is_target ? "target" : "preds",
                   "label %lld at index %lld is out of range [0, %lld)", label, row,
                   (long long)job->classes);
}

static tt_status explain_threshold(const count_job *job, const tt_cuda_record *found,
                                   cudaStream_t stream, tt_error *err)
{
    const int64_t pos = TT_CUDA_KEY_POS(found->key);
    const long long row = pos / job->columns, col = pos % job->columns;
    const int code = TT_CUDA_KEY_CODE(found->key);
    if (code == TT_CODE_NAN)
        return tt_fail(err, TT_EVALUE, "preds", "NaN at sample %lld, column %lld", row, col);
    const int is_target = code == TT_CODE_TARGET;
    long long value;
    if (label_at(is_target ? job->target : job->preds, row, col, stream, &value, err))
        return err->status;
    return tt_fail(err, TT_EVALUE, is_target ? "target" : "preds",
                   "value %lld at sample %lld, column %lld is not a binary label (0 or 1)", value,
                   row, col);
}

static tt_status explain_binned(const count_job *job, const tt_cuda_record *found,
                                cudaStream_t stream, tt_error *err)
{
    if (found->thr_key != TT_CUDA_CLEAR) { /* the CPU core checks the thresholds first */
        const long long i = TT_CUDA_KEY_POS(found->thr_key);
        if (TT_CUDA_KEY_CODE(found->thr_key) == TT_THR_NAN)
            return tt_fail(err, TT_EVALUE, "thresholds", "NaN at index %lld", i);
        double here, before;
        if (score_at(job->thresholds, i, 0, stream, &here, err) ||
            score_at(job->thresholds, i - 1, 0, stream, &before, err))
            return err->status;
        return tt_fail(err, TT_EVALUE, "thresholds",
                       "expected non-decreasing values, got %g after %g at index %lld", here,
                       before, i);
    }
    const int64_t pos = TT_CUDA_KEY_POS(found->key);
    const long long row = pos / job->columns, col = pos % job->columns;
    if (TT_CUDA_KEY_CODE(found->key) == TT_CODE_NAN)
        return tt_fail(err, TT_EVALUE, "preds", "NaN at sample %lld, column %lld", row, col);
    const int multiclass = job->preds->ndim == 2 && job->target->ndim == 1;
    long long label;
    if (label_at(job->target, row, multiclass ? 0 : col, stream, &label, err))
        return err->status;
    return tt_fail(err, TT_EVALUE, "target", "label %lld at sample %lld is out of range [0, %lld)",
                   label, row, (long long)(multiclass ? job->columns : 2));
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
                                            j->threshold, sign, rec, s);
}

static cudaError_t launch_binned(const count_job *j, int64_t sign, tt_cuda_record *rec, cudaStream_t s)
{
    if (rec != NULL) { /* the replay needs no second look at the thresholds */
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
    const count_job job = {out, preds, target, mask, NULL, ignore_index, 0.0, 0, 0, o.shape[0], 1};
    return count_call(ctx, launch_labels, explain_sample, &job, err);
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
    const count_job job = {out, preds, target, mask, NULL, ignore_index, 0.0, 0, 0, classes, 1};
    return count_call(ctx, launch_scores, explain_sample, &job, err);
}

tt_status tt_cuda_confmat_threshold(const tt_cuda_ctx *ctx, const tt_view *out,
                                    const tt_view *preds, const tt_view *target,
                                    const tt_view *mask, const int64_t *ignore_index,
                                    double threshold, tt_error *err)
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
    const count_job job = {out, preds, target, mask, NULL, ignore_index, threshold, 0, 0, 2, cols};
    return count_call(ctx, launch_threshold, explain_threshold, &job, err);
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
    const count_job job = {out,        preds, target, mask, thresholds, ignore_index,
                           0.0,        uniform, 0,    multiclass ? cols : 2, cols};
    return count_call(ctx, launch_binned, explain_binned, &job, err);
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
    const count_job job = {out, preds, target, mask, NULL, ignore_index, 0.0, 0, k, classes, 1};
    return count_call(ctx, launch_topk, explain_sample, &job, err);
}

/* ---- moments -------------------------------------------------------------------------------- */

static int64_t columns_of(const tt_view *x) { return x->ndim == 2 ? x->shape[1] : 1; }

static tt_status check_state(const tt_view *state, int64_t columns, tt_error *err)
{
    const int64_t shape[2] = {columns, 6};
    return tt_check_out(state, "state", TT_F64, 2, shape, err);
}

/* Batch into scratch, read the record, merge into the state only when it is clear. */
static tt_status moments_call(const tt_cuda_ctx *ctx, const tt_view *state, const tt_view *x,
                              const tt_view *second, int co, tt_error *err)
{
    const int64_t rows = x->shape[0], columns = columns_of(x);
    if (rows == 0 || columns == 0)
        return TT_OK; /* an empty batch merges as a no-op */
    cuda_call c;
    tt_cuda_record found;
    cudaError_t e;
    tt_status status = call_enter(&c, ctx, state->device_id, err);
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
    if ((status = read_record(&c, &found, err)) != TT_OK)
        goto done;
    if (found.key == TT_CUDA_CLEAR) {
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
        e = co ? tt_cuda_comoments_merge_launch(state, &bv, ctx->stream)
               : tt_cuda_moments_merge_launch(state, &bv, ctx->stream);
        if (e != cudaSuccess)
            status = cuda_fail(err, e, "the state merge");
        goto done;
    }
    const int64_t pos = TT_CUDA_KEY_POS(found.key);
    const long long row = pos / columns, col = pos % columns;
    switch (TT_CUDA_KEY_CODE(found.key)) {
    case TT_CODE_NAN:
        status = tt_fail(err, TT_EVALUE, "x", "NaN at sample %lld, column %lld", row, col);
        break;
    case TT_CODE_NAN_Y:
        status = tt_fail(err, TT_EVALUE, "y", "NaN at sample %lld, column %lld", row, col);
        break;
    default: {
        double w = 0.0;
        status = score_at(second, row, 0, ctx->stream, &w, err);
        if (status == TT_OK)
            status = tt_fail(err, TT_EVALUE, "weights",
                             "expected finite weights >= 0, got %g at sample %lld", w, row);
        break;
    }
    }
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
        const cudaError_t e = co ? tt_cuda_comoments_merge_launch(state, other, ctx->stream)
                                 : tt_cuda_moments_merge_launch(state, other, ctx->stream);
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
