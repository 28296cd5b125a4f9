/*
 * cuda_api.h: the CUDA kernels' launchers, defined by enqueue_count.c and enqueue_moments.c
 * and called by launch_count.c / launch_moments.c (which validate on the host first). Plain C:
 * every launcher takes tt_views whose pointers are device pointers on the queue's device,
 * enqueues its kernels on the queue's stream through the driver (kernels.h), never
 * synchronises, and returns the driver's result.
 *
 * Value errors (an out-of-range label, a NaN, a bad weight) cannot stop a kernel: a kernel that
 * meets one skips that sample and lowers the call's device error record to the sample's key
 * with atomicMin, so the record ends holding the FIRST bad position (and, at one position, the
 * check the CPU core would report first). Everything after that stays on the device: a replay
 * gated on the record undoes the counts, the moments merge is gated on it, and a one-thread
 * latch kernel copies the record and the rejected value into host memory (tt_cuda_report),
 * where call.c finds it later without ever waiting for it (pending.h).
 */
#ifndef TT_CUDA_API_H
#define TT_CUDA_API_H

#include "cuda/device_abi.h" /* the record, the codes, the report */
#include "cuda/kernels.h"

/* `v` as a kernel reads it (device_abi.h); NULL gives the NULL view. */
tt_dview tt_dview_of(const tt_view *v);

/* Counting launchers add `sign` per counted sample into the int64 `out`. With sign +1 `rec` is
 * the record the call reports into (may be NULL). With sign -1 the call is the undo replay and
 * `rec` is the record of the call being undone: the replay does nothing unless that record
 * holds an error, so it can be enqueued unconditionally, with no host look at the record. The
 * replay skips exactly the samples the first pass skipped, so it removes exactly what was added.
 * `ignore_index` may be NULL, `mask` NULL or a bool/uint8 [N] view. Arguments are already
 * validated (launch_count.c). */
tt_cu_result tt_cuda_confmat_labels_launch(const tt_view *out, const tt_view *preds,
                                           const tt_view *target, const tt_view *mask,
                                           const int64_t *ignore_index, int64_t sign,
                                           tt_cuda_record *rec, const tt_cuda_queue *q);
tt_cu_result tt_cuda_confmat_scores_launch(const tt_view *out, const tt_view *preds,
                                           const tt_view *target, const tt_view *mask,
                                           const int64_t *ignore_index, int64_t sign,
                                           tt_cuda_record *rec, const tt_cuda_queue *q);
/* confmat_threshold compares float preds against *threshold_at (a device double, written by
 * tt_cuda_threshold_pick_launch earlier on the stream) when it is not NULL, else `threshold`. */
tt_cu_result tt_cuda_confmat_threshold_launch(const tt_view *out, const tt_view *preds,
                                              const tt_view *target, const tt_view *mask,
                                              const int64_t *ignore_index, double threshold,
                                              const double *threshold_at, int64_t sign,
                                              tt_cuda_record *rec, const tt_cuda_queue *q);
/* Probabilities or logits, decided on the device: writes *chosen = `threshold` when every
 * element of the float `preds` lies in [0, 1], else `logit_threshold` (one outside or NaN).
 * `counters` is two device uints of scratch, cleared here on the stream. */
#define TT_CUDA_PICK_BYTES (sizeof(double) + 2 * sizeof(unsigned))
tt_cu_result tt_cuda_threshold_pick_launch(const tt_view *preds, double threshold,
                                           double logit_threshold, double *chosen,
                                           unsigned *counters, const tt_cuda_queue *q);
tt_cu_result tt_cuda_binned_launch(const tt_view *out, const tt_view *preds, const tt_view *target,
                                   const tt_view *mask, const int64_t *ignore_index,
                                   const tt_view *thresholds, int uniform, int64_t sign,
                                   tt_cuda_record *rec, const tt_cuda_queue *q);
tt_cu_result tt_cuda_topk_launch(const tt_view *out, const tt_view *preds, const tt_view *target,
                                 const tt_view *mask, const int64_t *ignore_index, int64_t k,
                                 int64_t sign, tt_cuda_record *rec, const tt_cuda_queue *q);

/* Moments: a batch is reduced into `batch` (a device float64 [D, 6] in the state's column
 * order, in scratch memory of at least tt_cuda_moments_scratch_bytes), then merged into the
 * state by the merge launcher, gated on the record. */
size_t tt_cuda_moments_scratch_bytes(int64_t rows, int64_t columns, int device);
tt_cu_result tt_cuda_moments_batch_launch(const tt_view *x, const tt_view *weights, int64_t columns,
                                          double *scratch, double *batch, tt_cuda_record *rec,
                                          const tt_cuda_queue *q);
tt_cu_result tt_cuda_comoments_batch_launch(const tt_view *x, const tt_view *y, int64_t columns,
                                            double *scratch, double *batch, tt_cuda_record *rec,
                                            const tt_cuda_queue *q);
/* state float64 [D, 6] contiguous += other ([D, 6], any strides) by Chan's merge; with a
 * non-NULL `gate`, only when that record is clear (no error). */
tt_cu_result tt_cuda_moments_merge_launch(const tt_view *state, const tt_view *other,
                                          const tt_cuda_record *gate, const tt_cuda_queue *q);
tt_cu_result tt_cuda_comoments_merge_launch(const tt_view *state, const tt_view *other,
                                            const tt_cuda_record *gate, const tt_cuda_queue *q);

/* The error record checks of binned_update's thresholds (NaN, decreasing). */
tt_cu_result tt_cuda_thresholds_check_launch(const tt_view *thresholds, tt_cuda_record *rec,
                                             const tt_cuda_queue *q);

/* Where the latch finds the rejected element: per error code, the tensor holding it (a NULL
 * view: no value to read); a position is row * columns + column (columns = 1 for the
 * per-sample kernels; a 1-D tensor ignores the column). */
typedef struct {
    const tt_view *by_code[5];
    int64_t columns;
    const tt_view *thresholds;
} tt_cuda_latch_spec;

/* Enqueues one thread that fills *report (host memory mapped into the device) from `rec`. */
tt_cu_result tt_cuda_latch_launch(const tt_cuda_record *rec, const tt_cuda_latch_spec *spec,
                                  tt_cuda_report *report, const tt_cuda_queue *q);

#endif /* TT_CUDA_API_H */
