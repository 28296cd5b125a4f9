/*
 * launch.h: the host side of torchtally._C_cuda's kernels, one function per kernel of
 * csrc/API.md. Plain C, no Python. Each function first validates (every tensor a CUDA tensor on
 * out's device, then the CPU core's shape and dtype rules, with the CPU core's messages), and
 * returns there when ctx->check_only is set: that part makes no CUDA call, so cuda/module.c
 * runs it with the GIL held before it asks torch for the stream. Otherwise it runs the kernel
 * on ctx->stream (on out's device) and returns TT_OK, TT_EVALUE/TT_ETYPE with `err` filled, or
 * TT_ECUDA when CUDA itself failed.
 *
 * Bad values (labels, NaN, weights): an update never waits for its kernels: a rejected batch is
 * undone on the device and reported at the next update into the same state, or by
 * tt_cuda_check (with wait: Metric.compute), unless ctx->immediate asks for the wait at the
 * call. Either way out / state end exactly as they were. The merges read nothing back. The
 * whole flow: csrc/API.md, "CUDA: the deferred rejection of a bad batch".
 */
#ifndef TT_CUDA_LAUNCH_H
#define TT_CUDA_LAUNCH_H

#include "cuda/cuda_api.h"

typedef struct {
    int check_only;      /* validate and return */
    int immediate;       /* wait for the call's own error check and raise at the call */
    tt_cu_stream stream; /* torch's current stream on out's device */
} tt_cuda_ctx;

/* Raises (TT_EVALUE, err filled) the oldest rejected update into the state occupying
 * [begin, begin + bytes) on `device` (begin NULL: into any state), after waiting for those
 * updates when `wait`. */
tt_status tt_cuda_check(int device, const void *begin, size_t bytes, int wait, tt_error *err);

/* Forgets the updates into the state at [begin, begin + bytes) (it was reset or is going away). */
void tt_cuda_discard(int device, const void *begin, size_t bytes);

tt_status tt_cuda_confmat_labels(const tt_cuda_ctx *ctx, const tt_view *out, const tt_view *preds,
                                 const tt_view *target, const tt_view *mask,
                                 const int64_t *ignore_index, tt_error *err);
tt_status tt_cuda_confmat_scores(const tt_cuda_ctx *ctx, const tt_view *out, const tt_view *preds,
                                 const tt_view *target, const tt_view *mask,
                                 const int64_t *ignore_index, tt_error *err);
tt_status tt_cuda_confmat_threshold(const tt_cuda_ctx *ctx, const tt_view *out,
                                    const tt_view *preds, const tt_view *target,
                                    const tt_view *mask, const int64_t *ignore_index,
                                    double threshold, const double *logit_threshold, tt_error *err);
tt_status tt_cuda_binned_update(const tt_cuda_ctx *ctx, const tt_view *out, const tt_view *preds,
                                const tt_view *target, const tt_view *mask,
                                const int64_t *ignore_index, const tt_view *thresholds, int uniform,
                                tt_error *err);
tt_status tt_cuda_topk_update(const tt_cuda_ctx *ctx, const tt_view *out, const tt_view *preds,
                              const tt_view *target, const tt_view *mask,
                              const int64_t *ignore_index, int64_t k, tt_error *err);
tt_status tt_cuda_moments_update(const tt_cuda_ctx *ctx, const tt_view *state, const tt_view *x,
                                 const tt_view *weights, tt_error *err);
tt_status tt_cuda_moments_merge(const tt_cuda_ctx *ctx, const tt_view *state, const tt_view *other,
                                tt_error *err);
tt_status tt_cuda_comoments_update(const tt_cuda_ctx *ctx, const tt_view *state, const tt_view *x,
                                   const tt_view *y, tt_error *err);
tt_status tt_cuda_comoments_merge(const tt_cuda_ctx *ctx, const tt_view *state,
                                  const tt_view *other, tt_error *err);

/* The segmentation kernels (launch_segmentation.c): no record, no report, no undo. `out` gets
 * the counts (or the argmax map) of the batch as the CPU core's, `status` (int64 [1]) INT64_MAX
 * or the key of the first bad value (segmentation.cu); the caller gates on it. */
tt_status tt_cuda_label_counts(const tt_cuda_ctx *ctx, const tt_view *out, const tt_view *status,
                               const tt_view *preds, const tt_view *target, int64_t from_scores,
                               tt_error *err);
tt_status tt_cuda_mask_counts(const tt_cuda_ctx *ctx, const tt_view *out, const tt_view *status,
                              const tt_view *preds, const tt_view *target, tt_error *err);
tt_status tt_cuda_class_argmax(const tt_cuda_ctx *ctx, const tt_view *out, const tt_view *scores,
                               tt_error *err);

#endif /* TT_CUDA_LAUNCH_H */
