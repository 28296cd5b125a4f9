/*
 * pending.c: the table of CUDA updates in flight and of rejected ones not yet reported
 * (pending.h). One table per device, made on first use: the report ring in pinned host memory
 * mapped into the device, an event per ring slot, and the calls' bookkeeping.
 */
#include "cuda/pending.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define MAX_DEVICES TT_MAX_DEVICES
/* The note after the CPU core's message, by where the rejection is raised (pending.h). */
#define NOTE_AT_UPDATE                                                                             \
    " (found on the GPU after that earlier update returned: none of its batch was counted, "       \
    "and this call's batch was not run either)"
#define NOTE_AT_CHECK                                                                              \
    " (found on the GPU after that update returned: none of its batch was counted)"

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
    tt_cu_event events[TT_PENDING_RING];
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
        tt_cu_deviceptr seen = 0;
        const tt_cu_api *cu = tt_cu();
        tt_cu_result e =
            t == NULL ? TT_CU_ERROR_OUT_OF_MEMORY
            : cu == NULL
                ? TT_CU_NO_DRIVER
                : cu->mem_host_alloc(&host, sizeof(tt_cuda_report) * TT_PENDING_RING,
                                     TT_CU_MEMHOSTALLOC_DEVICEMAP | TT_CU_MEMHOSTALLOC_PORTABLE);
        if (e == TT_CU_SUCCESS)
            e = cu->mem_host_get_device_pointer(&seen, host, 0);
        if (e != TT_CU_SUCCESS) {
            if (host != NULL)
                cu->mem_free_host(host);
            free(t);
            t = NULL;
            tt_cuda_fail(err, e, "allocating the pinned error reports");
        } else {
            t->reports = host;
            t->reports_dev = (tt_cuda_report *)(uintptr_t)seen;
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
    return span.begin == NULL ||
           (at >= span.begin && at < span.begin + (span.bytes ? span.bytes : 1));
}

/* A finished call: keep it when rejected (dropping the oldest kept one if full). */
static void take_report(device_table *t, unsigned i)
{
    const tt_cuda_report *r = &t->reports[i];
    t->state[i] = SLOT_SEEN;
    if ((r->key == TT_CUDA_CLEAR && r->thr_key == TT_CUDA_CLEAR) || t->out[i] == NULL)
        return; /* clean, or its state was discarded while it ran */
    if (t->n_rejected == TT_PENDING_REJECTED) {
        memmove(&t->rejected[0], &t->rejected[1],
                sizeof t->rejected[0] * (TT_PENDING_REJECTED - 1));
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
    tt_cu_result e;
    if (wait) {
        for (unsigned long long n = t->tail; n < t->head; n++) {
            const unsigned i = (unsigned)(n % TT_PENDING_RING);
            if (t->state[i] != SLOT_IN_FLIGHT || !within(span, t->out[i]))
                continue;
            if ((e = tt_cu()->event_synchronize(t->events[i])) != TT_CU_SUCCESS)
                return tt_cuda_fail(err, e, "waiting for an update's kernels");
            take_report(t, i);
        }
    }
    while (t->tail < t->head) {
        const unsigned i = (unsigned)(t->tail % TT_PENDING_RING);
        if (t->state[i] == SLOT_IN_FLIGHT) {
            e = tt_cu()->event_query(t->events[i]);
            if (e == TT_CU_ERROR_NOT_READY)
                break;
            if (e != TT_CU_SUCCESS)
                return tt_cuda_fail(err, e, "an update's kernels");
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
        const tt_cu_result e = t->state[i] == SLOT_IN_FLIGHT
                                   ? tt_cu()->event_synchronize(t->events[i])
                                   : TT_CU_SUCCESS;
        status = e == TT_CU_SUCCESS ? look(t, ANY_STATE, 0, err)
                                    : tt_cuda_fail(err, e, "an update's kernels");
    }
    const unsigned i = (unsigned)(t->head % TT_PENDING_RING);
    if (status == TT_OK && !t->has_event[i]) {
        const tt_cu_result e = tt_cu()->event_create(&t->events[i], TT_CU_EVENT_DISABLE_TIMING);
        if (e == TT_CU_SUCCESS)
            t->has_event[i] = 1;
        else
            status = tt_cuda_fail(err, e, "cuEventCreate");
    }
    *slot = &t->reports_dev[i];
    pthread_mutex_unlock(&t->lock);
    return status;
}

tt_status tt_pending_push(int device, const void *out, const tt_cuda_explain *why,
                          tt_cu_stream stream, tt_error *err)
{
    device_table *t = table_of(device, 1, err);
    if (t == NULL)
        return err->status;
    pthread_mutex_lock(&t->lock);
    const unsigned i = (unsigned)(t->head % TT_PENDING_RING);
    const tt_cu_result e = tt_cu()->event_record(t->events[i], stream);
    if (e == TT_CU_SUCCESS) {
        t->state[i] = SLOT_IN_FLIGHT;
        t->out[i] = out;
        t->why[i] = *why;
        t->head++;
    }
    pthread_mutex_unlock(&t->lock);
    return e == TT_CU_SUCCESS ? TT_OK : tt_cuda_fail(err, e, "cuEventRecord");
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
