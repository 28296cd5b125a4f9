/*
 * call.c: the lifecycle of one host call of a CUDA kernel method (call.h), the device checks
 * before it, and the deferred checks (tt_cuda_check, tt_cuda_discard: launch.h).
 *
 * One workspace per device holds the call's error record and its scratch (the moments batch,
 * the chosen threshold), under a mutex held from the record's reset to the latch. An event
 * recorded after each call's last kernel makes the next call's stream wait for it on the
 * device: no host wait. The protocol that uses the record is launch_count.c's (counting
 * kernels) and launch_moments.c's (moments); the overview is csrc/API.md, "CUDA: the deferred
 * rejection of a bad batch".
 */
#include "cuda/call.h"

#include <pthread.h>

#include "core/dlpack_abi.h"

#define MAX_DEVICES TT_MAX_DEVICES
#define RECORD_BYTES 256 /* the record, padded so that the scratch after it stays aligned */
#define MIN_WORKSPACE ((size_t)1 << 20)

struct tt_cuda_workspace {
    pthread_mutex_t lock;
    char *buffer; /* device memory: [record | scratch] */
    size_t size;
    tt_cu_event last_use;
    int has_event;
};
typedef struct tt_cuda_workspace workspace;

static workspace workspaces[MAX_DEVICES];
static pthread_once_t workspaces_once = PTHREAD_ONCE_INIT;

static void init_workspaces(void)
{
    for (int i = 0; i < MAX_DEVICES; i++)
        pthread_mutex_init(&workspaces[i].lock, NULL);
}

/* ---- device checks ------------------------------------------------------------------------ */

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
tt_status tt_cuda_out(const tt_view *out, const char *arg, tt_view *copy, tt_error *err)
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
tt_status tt_cuda_same_device(const tt_view *v, const char *arg, const tt_view *out,
                              const char *out_arg, tt_view *copy, tt_error *err)
{
    if (v == NULL) {
        memset(copy, 0, sizeof *copy); /* never read: the argument is absent */
        return TT_OK;
    }
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

tt_status tt_cuda_call_enter(tt_cuda_call *c, const tt_cuda_ctx *ctx, int device, tt_error *err)
{
    memset(c, 0, sizeof *c);
    c->ctx = ctx;
    c->device = device;
    c->q.device = device;
    c->q.stream = ctx->stream;
    if (device < 0 || device >= MAX_DEVICES)
        return tt_fail(err, TT_EVALUE, "out", "CUDA device %d is beyond the %d devices supported",
                       device, MAX_DEVICES);
    if (!tt_kernels_loaded(device))
        return tt_fail(
            err, TT_EVALUE, "out",
            "torchtally's CUDA kernels are not loaded on cuda:%d; torchtally.kernels "
            "loads them at the first use of the device (torchtally.cuda_status() says why "
            "they are not)",
            device);
    tt_status status = tt_device_enter(device, &c->previous, &c->switched, err);
    if (status != TT_OK)
        return status;
    int capturing = TT_CU_STREAM_CAPTURE_STATUS_NONE;
    const tt_cu_result r = tt_cu()->stream_is_capturing(ctx->stream, &capturing);
    if (r != TT_CU_SUCCESS)
        return tt_cuda_fail(err, r, "asking whether the stream is capturing a CUDA graph");
    if (capturing != TT_CU_STREAM_CAPTURE_STATUS_NONE)
        return tt_fail(err, TT_EVALUE, "out",
                       "torchtally's CUDA kernels cannot be captured in a CUDA graph: an update "
                       "allocates scratch, waits on events and looks at earlier updates' reports, "
                       "which a graph replay would not repeat. Update the metric outside the "
                       "captured region (e.g. on the graph's outputs after replay())");
    return TT_OK;
}

/* Locks the device's workspace, makes room for `scratch` bytes and clears the record. */
tt_status tt_cuda_call_begin(tt_cuda_call *c, size_t scratch, tt_error *err)
{
    pthread_once(&workspaces_once, init_workspaces);
    const tt_cu_api *cu = tt_cu();
    workspace *ws = &workspaces[c->device];
    pthread_mutex_lock(&ws->lock);
    c->ws = ws;
    c->locked = 1;
    tt_cu_result r;
    if (!ws->has_event) {
        if ((r = cu->event_create(&ws->last_use, TT_CU_EVENT_DISABLE_TIMING)) != TT_CU_SUCCESS)
            return tt_cuda_fail(err, r, "cuEventCreate");
        ws->has_event = 1;
    } else if ((r = cu->stream_wait_event(c->q.stream, ws->last_use, 0)) != TT_CU_SUCCESS) {
        return tt_cuda_fail(err, r, "cuStreamWaitEvent");
    }
    const size_t need = RECORD_BYTES + scratch;
    if (need > ws->size) {
        if (ws->buffer != NULL) { /* cuMemFree waits for the device: only when the scratch grows */
            cu->mem_free((tt_cu_deviceptr)(uintptr_t)ws->buffer);
            ws->buffer = NULL;
            ws->size = 0;
        }
        const size_t size = need < MIN_WORKSPACE ? MIN_WORKSPACE : need;
        tt_cu_deviceptr p = 0;
        if ((r = cu->mem_alloc(&p, size)) != TT_CU_SUCCESS)
            return tt_cuda_fail(err, r, "allocating the kernel workspace");
        ws->buffer = (char *)(uintptr_t)p;
        ws->size = size;
    }
    c->rec = (tt_cuda_record *)ws->buffer;
    c->scratch = ws->buffer + RECORD_BYTES;
    if ((r = cu->memset_d8_async((tt_cu_deviceptr)(uintptr_t)c->rec, 0xff, sizeof(tt_cuda_record),
                                 c->q.stream)) != TT_CU_SUCCESS)
        return tt_cuda_fail(err, r, "clearing the error record");
    return tt_pending_slot(c->device, &c->report, err);
}

/* After the call's kernels: the latch into the report slot, the call in flight, and with
 * immediate checks the wait for it (the one host synchronisation, on request only). */
tt_status tt_cuda_call_report(tt_cuda_call *c, const void *out, const tt_cuda_latch_spec *spec,
                              const tt_cuda_explain *why, tt_error *err)
{
    const tt_cu_result r = tt_cuda_latch_launch(c->rec, spec, c->report, &c->q);
    if (r != TT_CU_SUCCESS)
        return tt_cuda_fail(err, r, "the error report's launch");
    if (tt_pending_push(c->device, out, why, c->q.stream, err))
        return err->status;
    const tt_span mine = {out, 1};
    return c->ctx->immediate ? tt_pending_check(c->device, mine, 1, TT_PENDING_AT_CALL, err)
                             : TT_OK;
}

void tt_cuda_call_end(tt_cuda_call *c)
{
    if (c->locked) {
        tt_cu()->event_record(c->ws->last_use,
                              c->q.stream); /* a failure here shows at the next call */
        pthread_mutex_unlock(&c->ws->lock);
    }
    tt_device_leave(c->previous, c->switched);
}

/* A rejected earlier update into `out`, found without waiting: raised before this call runs. */
tt_status tt_cuda_earlier_rejection(int device, const void *out, tt_error *err)
{
    const tt_span state = {out, 1};
    return tt_pending_check(device, state, 0, TT_PENDING_AT_UPDATE, err);
}

/* ---- deferred checks ------------------------------------------------------------------------ */

tt_status tt_cuda_check(int device, const void *begin, size_t bytes, int wait, tt_error *err)
{
    if (!tt_pending_known(device))
        return TT_OK; /* no update ever ran on that device: nothing to check, no CUDA call */
    tt_cu_context previous;
    int switched;
    tt_status status = tt_device_enter(device, &previous, &switched, err); /* its events */
    if (status != TT_OK)
        return status;
    const tt_span span = {begin, bytes};
    status = tt_pending_check(device, span, wait, TT_PENDING_AT_CHECK, err);
    tt_device_leave(previous, switched);
    return status;
}

void tt_cuda_discard(int device, const void *begin, size_t bytes)
{
    const tt_span span = {begin, bytes};
    tt_pending_discard(device, span);
}
