/*
 * pending.h: the CUDA updates whose error checks the host has not seen yet.
 *
 * An update never waits for its kernels. Its last kernel, the latch (report.cu), writes the
 * call's error record into a report slot in pinned host memory, and a CUDA event recorded
 * after it says when the slot is filled. The host looks at finished calls whenever it comes
 * back (the next update of any metric on that device, or an explicit check: Metric.compute
 * asks, waiting) and keeps the rejected ones, each tied to the state (`out`) it counted into,
 * until that state's owner is told. The state itself was already restored on the device (the
 * gated undo), so a late report changes nothing but where the exception surfaces.
 *
 * Per device: a ring of TT_PENDING_RING calls in flight (a full ring waits for its oldest call:
 * the only host wait of the deferred mode, reached only when the host runs that far ahead) and
 * up to TT_PENDING_REJECTED rejected calls not yet reported (beyond that the oldest is dropped:
 * its batch was undone all the same). Thread-safe; plain C over the CUDA driver.
 */
#ifndef TT_CUDA_PENDING_H
#define TT_CUDA_PENDING_H

#include "cuda/cuda_api.h"

#define TT_PENDING_RING 1024
#define TT_PENDING_REJECTED 64

/* How to put a report into words (explain.c): which kernel family and its sizes. */
typedef enum {
    TT_EXPLAIN_SAMPLE,    /* confmat_labels, confmat_scores, topk: positions are rows */
    TT_EXPLAIN_THRESHOLD, /* confmat_threshold: positions are row * columns + column */
    TT_EXPLAIN_BINNED,
    TT_EXPLAIN_MOMENTS,
} tt_explain_kind;

typedef struct {
    tt_explain_kind kind;
    int64_t classes; /* label range */
    int64_t columns;
    int multiclass; /* binned: target holds class labels */
} tt_cuda_explain;

/* Puts a rejected call's report into words (the CPU core's messages); defined in explain.c. */
tt_status tt_cuda_explain_report(const tt_cuda_explain *why, const tt_cuda_report *report,
                                 tt_error *err);

/* The device pointer of the report slot the next call on `device` fills (its latch writes
 * there). Waits for the oldest call in flight when the ring is full. Call under the device's
 * workspace lock (call.c), which also covers the push that follows. */
tt_status tt_pending_slot(int device, tt_cuda_report **slot, tt_error *err);

/* Registers that call as in flight: an event recorded on `stream` after its latch. */
tt_status tt_pending_push(int device, const void *out, const tt_cuda_explain *why,
                          tt_cu_stream stream, tt_error *err);

/* The states a look concerns: the calls whose `out` lies in [begin, begin + bytes), so that a
 * check of a whole state also finds updates into a part of it; begin NULL: every state. */
typedef struct {
    const char *begin;
    size_t bytes;
} tt_span;

/* Where a rejection is raised: at its own call (immediate checks), at a later update into the
 * same state (which then does not run), or by an explicit check (compute); the message says
 * which. */
enum { TT_PENDING_AT_CALL = 0, TT_PENDING_AT_UPDATE = 1, TT_PENDING_AT_CHECK = 2 };

/* Looks at the finished calls of `device` (with `wait`: first waits for every call in flight
 * into `span`) and fails with the oldest rejected call into `span`, which it forgets, its
 * message noted per `when`. TT_OK when there is none. */
tt_status tt_pending_check(int device, tt_span span, int wait, int when, tt_error *err);

/* Whether an update ever ran on `device` (no CUDA call). */
int tt_pending_known(int device);

/* Forgets the calls into `span`, finished or not (the state was reset or is going away). */
void tt_pending_discard(int device, tt_span span);

#endif /* TT_CUDA_PENDING_H */
