/*
 * enqueue_count.c: the launches of the counting kernels (cuda_api.h): the argument struct of
 * each (device_abi.h), the variant that fits (a per-block histogram in shared memory when the
 * counts fit, a warp or a thread per row for scores, the score dtype), and the grid. The
 * kernels themselves are confmat.cu, binned.cu, topk.cu and report.cu.
 */
#include "cuda/cuda_api.h"

#define SHARED_THRESHOLDS_MAX 2048

tt_dview tt_dview_of(const tt_view *v)
{
    tt_dview d;
    memset(&d, 0, sizeof d);
    if (v == NULL)
        return d;
    d.data = v->data;
    d.dtype = (int)v->dtype;
    d.rows = v->ndim >= 1 ? v->shape[0] : 1;
    d.cols = v->ndim == 2 ? v->shape[1] : 1;
    d.rstep = v->ndim >= 1 ? tt_step(v, 0) : 0;
    d.cstep = v->ndim == 2 ? tt_step(v, 1) : 0;
    return d;
}

static int score_index(tt_dtype dtype) { return (int)dtype - (int)TT_F16; }

static tt_cu_result launch_1d(const tt_cuda_queue *q, tt_kernel_id k, int64_t work,
                              int64_t per_block, size_t shared, void *args)
{
    const unsigned grid = tt_grid_for(q->device, k, work, per_block, shared);
    return tt_launch(q, k, grid, 1, TT_THREADS, 1, shared, args);
}

/* The fields every counting kernel's arguments share (device_abi.h): the three inputs, the
 * ignored label, the sign, the output, and the record (to report into, or the undo's gate). */
#define FILL_COUNTING(a, out_, preds_, target_, mask_, ignore_index_, sign_, rec_)                 \
    do {                                                                                           \
        memset(&(a), 0, sizeof(a));                                                                \
        (a).preds = tt_dview_of(preds_);                                                           \
        (a).target = tt_dview_of(target_);                                                         \
        (a).mask = tt_dview_of(mask_);                                                             \
        (a).has_ignore = (ignore_index_) != NULL;                                                  \
        (a).ignore = (ignore_index_) != NULL ? *(ignore_index_) : 0;                               \
        (a).sign = (sign_);                                                                        \
        (a).out = (long long *)(out_)->data;                                                       \
        (a).rec = (sign_) > 0 ? (rec_) : NULL;                                                     \
        (a).gate = (sign_) < 0 ? (rec_) : NULL;                                                    \
    } while (0)

/* ---- confusion matrices ------------------------------------------------------------------- */

static tt_labels_args labels_args_of(const tt_view *out, const tt_view *preds,
                                     const tt_view *target, const tt_view *mask,
                                     const int64_t *ignore_index, int64_t sign, tt_cuda_record *rec)
{
    tt_labels_args a;
    FILL_COUNTING(a, out, preds, target, mask, ignore_index, sign, rec);
    a.classes = out->shape[0];
    return a;
}

tt_cu_result tt_cuda_confmat_labels_launch(const tt_view *out, const tt_view *preds,
                                           const tt_view *target, const tt_view *mask,
                                           const int64_t *ignore_index, int64_t sign,
                                           tt_cuda_record *rec, const tt_cuda_queue *q)
{
    tt_labels_args a = labels_args_of(out, preds, target, mask, ignore_index, sign, rec);
    const int64_t n = target->shape[0];
    if (n == 0)
        return TT_CU_SUCCESS;
    const size_t shared = (size_t)(a.classes * a.classes) * sizeof(unsigned);
    if (shared <= TT_SHARED_BYTES)
        return launch_1d(q, TT_K_CONFMAT_LABELS_SHARED, n, (int64_t)TT_THREADS * 4, shared, &a);
    return launch_1d(q, TT_K_CONFMAT_LABELS_GLOBAL, n, TT_THREADS, 0, &a);
}

tt_cu_result tt_cuda_confmat_scores_launch(const tt_view *out, const tt_view *preds,
                                           const tt_view *target, const tt_view *mask,
                                           const int64_t *ignore_index, int64_t sign,
                                           tt_cuda_record *rec, const tt_cuda_queue *q)
{
    tt_labels_args a = labels_args_of(out, preds, target, mask, ignore_index, sign, rec);
    const int64_t n = a.preds.rows, classes = a.classes;
    if (preds->shape[0] == 0 || classes == 0)
        return TT_CU_SUCCESS;
    const size_t shared = (size_t)(classes * classes) * sizeof(unsigned);
    const int fits = shared <= TT_SHARED_BYTES;
    const int64_t rstep = a.preds.rstep < 0 ? -a.preds.rstep : a.preds.rstep;
    const int64_t cstep = a.preds.cstep < 0 ? -a.preds.cstep : a.preds.cstep;
    /* column-major scores: a thread per row keeps neighbouring threads on neighbouring bytes */
    const int thread_per_row = classes <= 16 || cstep > rstep;
    const int64_t size = (int64_t)tt_dtype_size(preds->dtype);
    a.vectorised =
        a.preds.cstep == size && (uintptr_t)a.preds.data % 16 == 0 && a.preds.rstep % 16 == 0;
    const int64_t rows_per_block =
        thread_per_row ? TT_THREADS : TT_THREADS / 32; /* or a warp per row */
    const tt_kernel_id first =
        thread_per_row
            ? (fits ? TT_K_CONFMAT_SCORES_THREAD_SHARED_F16 : TT_K_CONFMAT_SCORES_THREAD_GLOBAL_F16)
            : (fits ? TT_K_CONFMAT_SCORES_WARP_SHARED_F16 : TT_K_CONFMAT_SCORES_WARP_GLOBAL_F16);
    return launch_1d(q, (tt_kernel_id)(first + score_index(preds->dtype)), n, rows_per_block,
                     fits ? shared : 0, &a);
}

tt_cu_result tt_cuda_confmat_threshold_launch(const tt_view *out, const tt_view *preds,
                                              const tt_view *target, const tt_view *mask,
                                              const int64_t *ignore_index, double threshold,
                                              const double *threshold_at, int64_t sign,
                                              tt_cuda_record *rec, const tt_cuda_queue *q)
{
    tt_threshold_args a;
    FILL_COUNTING(a, out, preds, target, mask, ignore_index, sign, rec);
    a.float_preds = tt_is_float(preds->dtype);
    a.threshold = threshold;
    a.threshold_at = threshold_at;
    const int64_t total = a.preds.rows * a.preds.cols;
    if (total == 0)
        return TT_CU_SUCCESS;
    const size_t shared = (size_t)(4 * a.preds.cols) * sizeof(unsigned);
    if (shared <= TT_SHARED_BYTES)
        return launch_1d(q, TT_K_CONFMAT_THRESHOLD_SHARED, total, (int64_t)TT_THREADS * 4, shared,
                         &a);
    return launch_1d(q, TT_K_CONFMAT_THRESHOLD_GLOBAL, total, TT_THREADS, 0, &a);
}

tt_cu_result tt_cuda_threshold_pick_launch(const tt_view *preds, double threshold,
                                           double logit_threshold, double *chosen,
                                           unsigned *counters, const tt_cuda_queue *q)
{
    tt_pick_args a;
    memset(&a, 0, sizeof a);
    a.preds = tt_dview_of(preds);
    a.threshold = threshold;
    a.logit_threshold = logit_threshold;
    a.chosen = chosen;
    a.counters = counters;
    const tt_cu_result r = tt_cu()->memset_d8_async((tt_cu_deviceptr)(uintptr_t)counters, 0,
                                                    2 * sizeof(unsigned), q->stream);
    if (r != TT_CU_SUCCESS)
        return r;
    const int64_t total = a.preds.rows * a.preds.cols;
    return launch_1d(q, TT_K_THRESHOLD_PICK, total > 0 ? total : 1, (int64_t)TT_THREADS * 4, 0, &a);
}

/* ---- binned histograms -------------------------------------------------------------------- */

tt_cu_result tt_cuda_thresholds_check_launch(const tt_view *thresholds, tt_cuda_record *rec,
                                             const tt_cuda_queue *q)
{
    tt_thresholds_check_args a = {(const double *)thresholds->data, thresholds->shape[0], rec};
    if (a.count == 0)
        return TT_CU_SUCCESS;
    return tt_launch(q, TT_K_THRESHOLDS_CHECK, tt_grid(q->device, a.count, TT_THREADS, 1), 1,
                     TT_THREADS, 1, 0, &a);
}

tt_cu_result tt_cuda_binned_launch(const tt_view *out, const tt_view *preds, const tt_view *target,
                                   const tt_view *mask, const int64_t *ignore_index,
                                   const tt_view *thresholds, int uniform, int64_t sign,
                                   tt_cuda_record *rec, const tt_cuda_queue *q)
{
    tt_binned_args a;
    FILL_COUNTING(a, out, preds, target, mask, ignore_index, sign, rec);
    a.multiclass = preds->ndim == 2 && target->ndim == 1;
    a.thresholds = (const double *)thresholds->data;
    a.count = thresholds->shape[0];
    a.uniform = uniform;
    const int64_t total = a.preds.rows * a.preds.cols;
    if (total == 0)
        return TT_CU_SUCCESS;
    const size_t thr_bytes =
        a.count <= SHARED_THRESHOLDS_MAX ? (size_t)a.count * sizeof(double) : 0;
    const size_t hist_bytes = (size_t)(a.preds.cols * (a.count + 1) * 2) * sizeof(unsigned);
    const int sh_hist = thr_bytes + hist_bytes <= TT_SHARED_BYTES;
    const size_t shared = thr_bytes + (sh_hist ? hist_bytes : 0);
    const int64_t per_block = sh_hist ? (int64_t)TT_THREADS * 4 : TT_THREADS;
    const tt_kernel_id k =
        sh_hist
            ? (thr_bytes ? TT_K_BINNED_SHARED_HIST_SHARED_THR : TT_K_BINNED_SHARED_HIST_GLOBAL_THR)
            : (thr_bytes ? TT_K_BINNED_GLOBAL_HIST_SHARED_THR : TT_K_BINNED_GLOBAL_HIST_GLOBAL_THR);
    return launch_1d(q, k, total, per_block, shared, &a);
}

/* ---- top-k -------------------------------------------------------------------------------- */

tt_cu_result tt_cuda_topk_launch(const tt_view *out, const tt_view *preds, const tt_view *target,
                                 const tt_view *mask, const int64_t *ignore_index, int64_t k,
                                 int64_t sign, tt_cuda_record *rec, const tt_cuda_queue *q)
{
    tt_topk_args a;
    FILL_COUNTING(a, out, preds, target, mask, ignore_index, sign, rec);
    a.classes = preds->shape[1];
    a.k = k;
    if (a.preds.rows == 0 || a.classes == 0)
        return TT_CU_SUCCESS;
    const size_t shared = (size_t)(a.classes * 3) * sizeof(unsigned);
    const int fits = shared <= TT_SHARED_BYTES;
    const tt_kernel_id first = fits ? TT_K_TOPK_SHARED_F16 : TT_K_TOPK_GLOBAL_F16;
    return launch_1d(q, (tt_kernel_id)(first + score_index(preds->dtype)), a.preds.rows,
                     TT_THREADS / 32 /* a warp per row */, fits ? shared : 0, &a);
}

/* ---- the latch ---------------------------------------------------------------------------- */

tt_cu_result tt_cuda_latch_launch(const tt_cuda_record *rec, const tt_cuda_latch_spec *spec,
                                  tt_cuda_report *report, const tt_cuda_queue *q)
{
    tt_latch_args a;
    memset(&a, 0, sizeof a);
    a.rec = rec;
    for (int c = 0; c < 5; c++)
        a.by_code[c] = tt_dview_of(spec->by_code[c]);
    a.columns = spec->columns > 0 ? spec->columns : 1;
    a.thresholds = tt_dview_of(spec->thresholds);
    a.report = report;
    return tt_launch(q, TT_K_LATCH, 1, 1, 1, 1, 0, &a);
}
