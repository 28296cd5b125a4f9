/*
 * call.h: one host call of a CUDA kernel method, for launch_count.c and launch_moments.c: the
 * device checks that precede it, and its lifecycle on the device (call.c):
 *
 *   tt_cuda_call_enter   switch to out's device (restored by tt_cuda_call_end)
 *   tt_cuda_earlier_rejection   raise a rejected earlier update into the same state, first
 *   tt_cuda_call_begin   lock the device's workspace, make room for scratch, clear the record,
 *                        take a report slot (pending.h)
 *   ... the call's kernels, which lower the record on a bad value ...
 *   tt_cuda_call_report  the latch into the report slot, the call in flight (pending.h), and
 *                        with immediate checks the wait for it
 *   tt_cuda_call_end     record the workspace's last use, unlock, restore the device
 *
 * Plain C over the CUDA driver (kernels.h); no Python.
 */
#ifndef TT_CUDA_CALL_H
#define TT_CUDA_CALL_H

#include "cuda/launch.h"
#include "cuda/pending.h"

struct tt_cuda_workspace; /* per device, call.c's */

typedef struct {
    const tt_cuda_ctx *ctx;
    int device, switched, locked;
    tt_cu_context previous; /* the context current before the call, restored at its end */
    tt_cuda_queue q;        /* the device and torch's stream there */
    struct tt_cuda_workspace *ws;
    tt_cuda_record *rec;    /* device */
    char *scratch;          /* device, after the record */
    tt_cuda_report *report; /* the call's report slot, as the device sees it (pending.h) */
} tt_cuda_call;

/* `out` must be a CUDA tensor; *copy is `out` with its device masked as the CPU, for the CPU
 * core's shape and dtype checks (which also test residency). */
tt_status tt_cuda_out(const tt_view *out, const char *arg, tt_view *copy, tt_error *err);

/* `v` (NULL: an absent optional argument) must sit on the CUDA device of `out` (named
 * `out_arg`); *copy as tt_cuda_out's. */
tt_status tt_cuda_same_device(const tt_view *v, const char *arg, const tt_view *out,
                              const char *out_arg, tt_view *copy, tt_error *err);

/* Starts a call on `device`: zeroes *c, refuses a device whose kernels are not loaded and a
 * stream that is capturing a CUDA graph, then makes the device's context current. Whatever it
 * returns, end the call with tt_cuda_call_end. */
tt_status tt_cuda_call_enter(tt_cuda_call *c, const tt_cuda_ctx *ctx, int device, tt_error *err);

/* A rejected earlier update into `out`, found without waiting: raised before this call runs. */
tt_status tt_cuda_earlier_rejection(int device, const void *out, tt_error *err);

/* Locks the device's workspace, makes room for `scratch` bytes (c->scratch) and clears the
 * record (c->rec); takes the call's report slot. */
tt_status tt_cuda_call_begin(tt_cuda_call *c, size_t scratch, tt_error *err);

/* After the call's kernels: the latch into the report slot, the call in flight into `out`, and
 * with immediate checks the wait for it (the one host synchronisation, on request only). */
tt_status tt_cuda_call_report(tt_cuda_call *c, const void *out, const tt_cuda_latch_spec *spec,
                              const tt_cuda_explain *why, tt_error *err);

/* Records the workspace's last use on the stream, unlocks it, restores the current device. */
void tt_cuda_call_end(tt_cuda_call *c);

#endif /* TT_CUDA_CALL_H */
