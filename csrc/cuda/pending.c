/*
 * pending.c: the table of CUDA updates in flight and of rejected ones not yet reported
 * (pending.h). One table per device, made on first use: the report ring in pinned host memory
 * mapped into the device, an event per ring slot, and the calls' bookkeeping.
 */
#include "cuda/pending.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define MAX_DEVICES 64
/* The note after the CPU core's message, by where the rejection is raised (pending.h). */
#define NOTE_AT_UPDATE                                                                         \
    " (found on the GPU after that earlier update returned: none of its batch was counted, "  \
    "and this call's batch was not run either)"
#define NOTE_AT_CHECK " (found on the GPU after that update returned: none of its batch was counted)"

static const tt_span ANY_STATE = {NULL, 0};

typedef enum { SLOT_FREE = 0, SLOT_IN_FLIGHT, SLOT_SEEN } slot_state;

typedef struct {
    const void *out;
    tt_cuda_explain why;
    tt_cuda_report report;
} rejected_call;

typedef struct {
    pthread_mutex_t lock;
    tt_cuda_report *reports;     /* pinned host memory, TT_PENDING_RING slots */
    tt_cuda_report *reports_dev; /* the same memory as the device sees it */
    cudaEvent_t events[TT_PENDING_RING];
    unsigned char has_event[TT_PENDING_RING];
    unsigned char state[TT_PENDING_RING];
    const void *out[TT_PENDING_RING];
    tt_cuda_explain why[TT_PENDING_RING];
    unsigned long long head, tail; /* calls in flight (or seen, not yet passed): [tail, head) */
    rejected_call rejected[TT_PENDING_REJECTED];
    int n_rejected;
} device_table;

static device_table *tables[MAX_DEVICES];
static pthread_mutex_t tables_lock = PTHREAD_MUTEX_INITIALIZER;

static tt_status cuda_error(tt_error *err, cudaError_t e, const char *what)
{
    return tt_fail(err, e == cudaErrorMemoryAllocation ? TT_ENOMEM : TT_ECUDA, "CUDA",
                   "%s failed: %s (%s)", what, cudaGetErrorName(e), cudaGetErrorString(e));
}

/* The table of `device`, made on first use; NULL with `err` filled on failure. */
static device_table *table_of(int device, int create, tt_error *err)
{
    if (device < 0 || device >= MAX_DEVICES) {
        if (create)
            tt_fail(err, TT_EVALUE, "out", "CUDA device %d is beyond the %d devices supported",
                    device, MAX_DEVICES);
        return NULL;
    }
    pthread_mutex_lock(&tables_lock);
    device_table *t = tables[device];
    if (t == NULL && create) {
        t = calloc(1, sizeof *t);
        void *host = NULL;
        cudaError_t e = t == NULL ? cudaErrorMemoryAllocation
                                  : cudaHostAlloc(&host, sizeof(tt_cuda_report) * TT_PENDING_RING,
                                                  cudaHostAllocMapped | cudaHostAllocPortable);
        if (e == cudaSuccess)
            e = cudaHostGetDevicePointer((void **)&t->reports_dev, host, 0);
        if (e != cudaSuccess) {
            if (host != NULL)
                cudaFreeHost(host);
            free(t);
            t = NULL;
            cuda_error(err, e, "allocating the pinned error reports");
        } else {
            t->reports = host;
            pthread_mutex_init(&t->lock, NULL);
            tables[device] = t; /* kept for the life of the process, like a CUDA context */
        }
    }
    pthread_mutex_unlock(&tables_lock);
    return t;
}

static int within(tt_span span, const void *out)
{
    const char *at = out;
    return span.begin == NULL || (at >= span.begin && at < span.begin + (span.bytes ? span.bytes : 1));
}

/* A finished call: keep it when rejected (dropping the oldest kept one if full). */
static void take_report(device_table *t, unsigned i)
{
    const tt_cuda_report *r = &t->reports[i];
    t->state[i] = SLOT_SEEN;
    if ((r->key == TT_CUDA_CLEAR && r->thr_key == TT_CUDA_CLEAR) || t->out[i] == NULL)
        return; /* clean, or its state was discarded while it ran */
    if (t->n_rejected == TT_PENDING_REJECTED) {
        memmove(&t->rejected[0], &t->rejected[1], sizeof t->rejected[0] * (TT_PENDING_REJECTED - 1));
        t->n_rejected--;
    }
    rejected_call *c = &t->rejected[t->n_rejected++];
    c->out = t->out[i];
    c->why = t->why[i];
    c->report = *r;
}

/* Slots whose call finished, from the oldest on, until the first still running; with `wait`,
 * first waits for every call in flight into `span`. */
static tt_status look(device_table *t, tt_span span, int wait, tt_error *err)
{
    cudaError_t e;
    if (wait) {
        for (unsigned long long n = t->tail; n < t->head; n++) {
            const unsigned i = (unsigned)(n % TT_PENDING_RING);
            if (t->state[i] != SLOT_IN_FLIGHT || !within(span, t->out[i]))
                continue;
            if ((e = cudaEventSynchronize(t->events[i])) != cudaSuccess)
                return cuda_error(err, e, "waiting for an update's kernels");
            take_report(t, i);
        }
    }
    while (t->tail < t->head) {
        const unsigned i = (unsigned)(t->tail % TT_PENDING_RING);
        if (t->state[i] == SLOT_IN_FLIGHT) {
            e = cudaEventQuery(t->events[i]);
            if (e == cudaErrorNotReady)
                break;
            if (e != cudaSuccess)
                return cuda_error(err, e, "an update's kernels");
            take_report(t, i);
        }
        t->state[i] = SLOT_FREE;
        t->tail++;
    }
    return TT_OK;
}

tt_status tt_pending_slot(int device, tt_cuda_report **slot, tt_error *err)
{
    device_table *t = table_of(device, 1, err);
    if (t == NULL)
        return err->status;
    pthread_mutex_lock(&t->lock);
    tt_status status = look(t, ANY_STATE, 0, err);
    if (status == TT_OK && t->head - t->tail == TT_PENDING_RING) {
        /* the host is a full ring ahead of the device: wait for the oldest call */
        const unsigned i = (unsigned)(t->tail % TT_PENDING_RING);
        const cudaError_t e = t->state[i] == SLOT_IN_FLIGHT ? cudaEventSynchronize(t->events[i])
                                                            : cudaSuccess;
        status = e == cudaSuccess ? look(t, ANY_STATE, 0, err) : cuda_error(err, e, "an update's kernels");
    }
    const unsigned i = (unsigned)(t->head % TT_PENDING_RING);
    if (status == TT_OK && !t->has_event[i]) {
        const cudaError_t e = cudaEventCreateWithFlags(&t->events[i], cudaEventDisableTiming);
        if (e == cudaSuccess)
            t->has_event[i] = 1;
        else
            status = cuda_error(err, e, "cudaEventCreate");
    }
    *slot = &t->reports_dev[i];
    pthread_mutex_unlock(&t->lock);
    return status;
}

tt_status tt_pending_push(int device, const void *out, const tt_cuda_explain *why,
                          cudaStream_t stream, tt_error *err)
{
    device_table *t = table_of(device, 1, err);
    if (t == NULL)
        return err->status;
    pthread_mutex_lock(&t->lock);
    const unsigned i = (unsigned)(t->head % TT_PENDING_RING);
    const cudaError_t e = cudaEventRecord(t->events[i], stream);
    if (e == cudaSuccess) {
        t->state[i] = SLOT_IN_FLIGHT;
        t->out[i] = out;
        t->why[i] = *why;
        t->head++;
    }
    pthread_mutex_unlock(&t->lock);
    return e == cudaSuccess ? TT_OK : cuda_error(err, e, "cudaEventRecord");
}

tt_status tt_pending_check(int device, tt_span span, int wait, int when, tt_error *err)
{
    device_table *t = table_of(device, 0, err);
    if (t == NULL)
        return TT_OK; /* no call ever ran on this device */
    pthread_mutex_lock(&t->lock);
    tt_status status = look(t, span, wait, err);
    for (int k = 0; status == TT_OK && k < t->n_rejected; k++) {
        if (!within(span, t->rejected[k].out))
            continue;
        const rejected_call c = t->rejected[k];
        memmove(&t->rejected[k], &t->rejected[k + 1], sizeof c * (size_t)(t->n_rejected - k - 1));
        t->n_rejected--;
        status = tt_cuda_explain_report(&c.why, &c.report, err);
        if (when != TT_PENDING_AT_CALL) {
            const size_t used = strlen(err->message);
            snprintf(err->message + used, sizeof err->message - used, "%s",
                     when == TT_PENDING_AT_UPDATE ? NOTE_AT_UPDATE : NOTE_AT_CHECK);
        }
    }
    pthread_mutex_unlock(&t->lock);
    return status;
}

int tt_pending_known(int device)
{
    tt_error ignored;
    return table_of(device, 0, &ignored) != NULL;
}

void tt_pending_discard(int device, tt_span span)
{
    tt_error ignored;
    device_table *t = table_of(device, 0, &ignored);
    if (t == NULL)
        return;
    pthread_mutex_lock(&t->lock);
    for (unsigned long long n = t->tail; n < t->head; n++)
        if (t->out[n % TT_PENDING_RING] != NULL && within(span, t->out[n % TT_PENDING_RING]))
            t->out[n % TT_PENDING_RING] = NULL;
    int kept = 0;
    for (int k = 0; k < t->n_rejected; k++)
        if (!within(span, t->rejected[k].out))
            t->rejected[kept++] = t->rejected[k];
    t->n_rejected = kept;
    pthread_mutex_unlock(&t->lock);
}
