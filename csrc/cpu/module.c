/*
 * module.c: torchtally._C, the Python binding of the C kernels (csrc/kernels/). The module
 * (PEP 489 multi-phase init, state holding the DLPack cache), a thunk per kernel method, and
 * the introspection the tests use (DLPack struct layout, what is read from a tensor). Argument
 * parsing, the GIL release around the kernel, status -> exception and the release of every
 * DLPack borrow are binding.c's, shared with torchtally._C_cuda; the methods and their
 * arguments are listed once, in binding.h (TT_KERNELS).
 */
#include <stddef.h>

#include "core/binding.h"
#include "core/module_def.h"
#include "kernels/binned.h"
#include "kernels/binned_finish.h"
#include "kernels/box_overlap.h"
#include "kernels/calibration.h"
#include "kernels/coco_accumulate.h"
#include "kernels/coco_match.h"
#include "kernels/confmat.h"
#include "kernels/eed.h"
#include "kernels/finish.h"
#include "kernels/levenshtein.h"
#include "kernels/moments.h"
#include "kernels/mask_counts.h"
#include "kernels/panoptic.h"
#include "kernels/ngram.h"
#include "kernels/lcs.h"
#include "kernels/perplexity.h"
#include "kernels/ranking.h"
#include "kernels/retrieval.h"
#include "kernels/signal_sums.h"
#include "kernels/simd.h"
#include "kernels/squared_error.h"
#include "kernels/ssim_moments.h"
#include "kernels/surface_distance.h"
#include "kernels/ter.h"
#include "kernels/topk.h"

typedef struct {
    tt_dlpack_cache dlpack;
} module_state;

static module_state *get_state(PyObject *module) { return PyModule_GetState(module); }

/* ---- the kernels: a thunk per method of TT_KERNELS (binding.h) ------------------------------ */

static tt_status run_confmat_labels(const void *ctx, const tt_args *a, tt_error *err)
{
    return tt_confmat_labels(a->tensor[0], a->tensor[1], a->tensor[2], a->tensor[3], a->opt_int[4],
                             err);
}
static tt_status run_confmat_scores(const void *ctx, const tt_args *a, tt_error *err)
{
    return tt_confmat_scores(a->tensor[0], a->tensor[1], a->tensor[2], a->tensor[3], a->opt_int[4],
                             err);
}
static tt_status run_confmat_threshold(const void *ctx, const tt_args *a, tt_error *err)
{
    return tt_confmat_threshold(a->tensor[0], a->tensor[1], a->tensor[2], a->tensor[3],
                                a->opt_int[4], a->floats[5], a->opt_float[6], err);
}
static tt_status run_binned_update(const void *ctx, const tt_args *a, tt_error *err)
{
    return tt_binned_update(a->tensor[0], a->tensor[1], a->tensor[2], a->tensor[3], a->opt_int[4],
                            a->tensor[5], (int)a->ints[6], err);
}
static tt_status run_topk_update(const void *ctx, const tt_args *a, tt_error *err)
{
    return tt_topk_update(a->tensor[0], a->tensor[1], a->tensor[2], a->tensor[3], a->opt_int[4],
                          a->ints[5], err);
}
static tt_status run_moments_update(const void *ctx, const tt_args *a, tt_error *err)
{
    return tt_moments_update(a->tensor[0], a->tensor[1], a->tensor[2], err);
}
static tt_status run_moments_merge(const void *ctx, const tt_args *a, tt_error *err)
{
    return tt_moments_merge(a->tensor[0], a->tensor[1], err);
}
static tt_status run_comoments_update(const void *ctx, const tt_args *a, tt_error *err)
{
    return tt_comoments_update(a->tensor[0], a->tensor[1], a->tensor[2], err);
}
static tt_status run_comoments_merge(const void *ctx, const tt_args *a, tt_error *err)
{
    return tt_comoments_merge(a->tensor[0], a->tensor[1], err);
}

/* The CPU kernels need nothing but their arguments: the whole call is binding.c's. */
static PyObject *call_kernel(PyObject *module, const tt_kernel_spec *spec, PyObject *const *args,
                             Py_ssize_t nargs)
{
    return tt_call_kernel(&get_state(module)->dlpack, spec, NULL, args, nargs);
}

TT_KERNELS(TT_DEFINE_KERNEL)

/* ---- CPU-only methods ----------------------------------------------------------------------- */

/* stat_finish and binned_finish read a small state that compute() already holds on the host:
 * torchtally's Python layer calls them for CPU states only (a CUDA state is finished by torch on
 * the device). */
static tt_status run_stat_finish(const void *ctx, const tt_args *a, tt_error *err)
{
    return tt_stat_finish(a->tensor[0], a->tensor[1], a->tensor[2], a->ints[3], err);
}

static tt_status run_binned_finish(const void *ctx, const tt_args *a, tt_error *err)
{
    return tt_binned_finish(a->tensor[0], a->tensor[1], a->ints[2], err);
}

/* calibration_update and ranking_update have no CUDA build: torchtally.kernels sends every other
 * device's tensors to the torch reference. */
static tt_status run_calibration_update(const void *ctx, const tt_args *a, tt_error *err)
{
    return tt_calibration_update(a->tensor[0], a->tensor[1], a->tensor[2], a->tensor[3],
                                 a->tensor[4], err);
}

static tt_status run_ranking_update(const void *ctx, const tt_args *a, tt_error *err)
{
    return tt_ranking_update(a->tensor[0], a->tensor[1], a->tensor[2], err);
}

/* coco_accumulate runs at compute on the host: MeanAveragePrecision hands it CPU rows. */
static tt_status run_coco_accumulate(const void *ctx, const tt_args *a, tt_error *err)
{
    return tt_coco_accumulate(a->tensor[0], a->tensor[1], a->tensor[2], a->tensor[3], a->tensor[4],
                              a->tensor[5], a->tensor[6], err);
}

/* coco_match has no CUDA build either: MeanAveragePrecision's update prepares its inputs on the
 * host. */
static tt_status run_coco_match(const void *ctx, const tt_args *a, tt_error *err)
{
    return tt_coco_match(a->tensor[0], a->tensor[1], a->tensor[2], a->tensor[3], a->tensor[4],
                         a->tensor[5], err);
}

/* box_overlap_matrix and box_overlap_sums have no CUDA build either. */
static tt_status run_box_overlap_matrix(const void *ctx, const tt_args *a, tt_error *err)
{
    return tt_box_overlap_matrix(a->tensor[0], a->tensor[1], a->tensor[2], a->ints[3], err);
}

static tt_status run_box_overlap_sums(const void *ctx, const tt_args *a, tt_error *err)
{
    return tt_box_overlap_sums(a->tensor[0], a->tensor[1], a->tensor[2], a->tensor[3], a->tensor[4],
                               a->tensor[5], a->ints[6], a->opt_float[7], err);
}

/* panoptic_update has no CUDA build either (its matching is a hash walk per image). */
static tt_status run_panoptic_update(const void *ctx, const tt_args *a, tt_error *err)
{
    return tt_panoptic_update(a->tensor[0], a->tensor[1], a->tensor[2], a->tensor[3], a->tensor[4],
                              a->tensor[5], a->tensor[6], (int)a->ints[7], err);
}

/* surface_distance and mask_counts have no CUDA build either: other devices take the torch
 * reference. */
static tt_status run_surface_distance(const void *ctx, const tt_args *a, tt_error *err)
{
    return tt_surface_distance(a->tensor[0], a->tensor[1], a->tensor[2], a->ints[3], a->floats[4],
                               a->floats[5], (int)a->ints[6], err);
}

static tt_status run_mask_counts(const void *ctx, const tt_args *a, tt_error *err)
{
    return tt_mask_counts(a->tensor[0], a->tensor[1], a->tensor[2], err);
}

/* levenshtein has no CUDA build either: its inputs are token ids made on the host. */
static tt_status run_levenshtein(const void *ctx, const tt_args *a, tt_error *err)
{
    return tt_levenshtein(a->tensor[0], a->tensor[1], a->tensor[2], a->ints[3], err);
}

/* bleu_update and chrf_update have no CUDA build: their inputs are token ids made on the host. */
static tt_status run_bleu_update(const void *ctx, const tt_args *a, tt_error *err)
{
    return tt_bleu_update(a->tensor[0], a->tensor[1], a->tensor[2], a->tensor[3], err);
}

static tt_status run_chrf_update(const void *ctx, const tt_args *a, tt_error *err)
{
    return tt_chrf_update(a->tensor[0], a->tensor[1], a->tensor[2], a->tensor[3], a->tensor[4],
                          a->ints[5], a->floats[6], err);
}

/* lcs and perplexity_update (the text metrics) have no CUDA build either. */
static tt_status run_lcs(const void *ctx, const tt_args *a, tt_error *err)
{
    return tt_lcs(a->tensor[0], a->tensor[1], a->tensor[2], a->tensor[3], a->tensor[4], err);
}

static tt_status run_perplexity_update(const void *ctx, const tt_args *a, tt_error *err)
{
    return tt_perplexity_update(a->tensor[0], a->tensor[1], a->tensor[2], a->tensor[3],
                                a->opt_int[4], err);
}

/* ssim_moments (the image metrics) has no CUDA build either. */
static tt_status run_ssim_moments(const void *ctx, const tt_args *a, tt_error *err)
{
    return tt_ssim_moments(a->tensor[0], a->tensor[1], a->tensor[2], a->tensor[3], a->tensor[4],
                           a->ints[5], a->ints[6], err);
}

/* squared_error (PeakSignalNoiseRatio) has no CUDA build either. */
static tt_status run_squared_error(const void *ctx, const tt_args *a, tt_error *err)
{
    return tt_squared_error(a->tensor[0], a->tensor[1], a->tensor[2], a->tensor[3], err);
}

/* signal_sums (the audio signal metrics) has no CUDA build either. */
static tt_status run_signal_sums(const void *ctx, const tt_args *a, tt_error *err)
{
    return tt_signal_sums(a->tensor[0], a->tensor[1], a->tensor[2], (int)a->ints[3], a->ints[4],
                          a->floats[5], err);
}

/* ter_sentences and eed_sentences run on the host only: the text metrics pack their token ids
 * on the CPU. */
static tt_status run_ter_sentences(const void *ctx, const tt_args *a, tt_error *err)
{
    return tt_ter_sentences(a->tensor[0], a->tensor[1], a->tensor[2], a->tensor[3], a->tensor[4],
                            a->tensor[5], err);
}

static tt_status run_eed_sentences(const void *ctx, const tt_args *a, tt_error *err)
{
    return tt_eed_sentences(a->tensor[0], a->tensor[1], a->tensor[2], a->tensor[3], a->tensor[4],
                            a->tensor[5], a->tensor[6], err);
}

/* retrieval_scores runs at compute, on the host: the retrieval metrics hand it CPU rows. */
static tt_status run_retrieval_scores(const void *ctx, const tt_args *a, tt_error *err)
{
    return tt_retrieval_scores(a->tensor[0], a->tensor[1], a->tensor[2], a->tensor[3], a->ints[4],
                               a->ints[5], (int)a->ints[6], err);
}

static tt_status run_retrieval_order(const void *ctx, const tt_args *a, tt_error *err)
{
    return tt_retrieval_order(a->tensor[0], a->tensor[1], a->tensor[2], a->tensor[3], a->tensor[4],
                              a->tensor[5], err);
}

#define TT_CPU_KERNELS(X)                                                                          \
    X(stat_finish, "stat_finish(out, state, requests, layout)", {"out", TT_ARG_OUT_TENSOR},        \
      {"state", TT_ARG_TENSOR}, {"requests", TT_ARG_TENSOR}, {"layout", TT_ARG_INT})               \
    X(binned_finish, "binned_finish(out, hist, metric)", {"out", TT_ARG_OUT_TENSOR},               \
      {"hist", TT_ARG_TENSOR}, {"metric", TT_ARG_INT})                                             \
    X(calibration_update, "calibration_update(counts, sums, conf, hit, boundaries)",               \
      {"counts", TT_ARG_OUT_TENSOR}, {"sums", TT_ARG_OUT_TENSOR}, {"conf", TT_ARG_TENSOR},         \
      {"hit", TT_ARG_TENSOR}, {"boundaries", TT_ARG_TENSOR})                                       \
    X(ranking_update, "ranking_update(out, preds, target)", {"out", TT_ARG_OUT_TENSOR},            \
      {"preds", TT_ARG_TENSOR}, {"target", TT_ARG_TENSOR})                                         \
    X(coco_accumulate,                                                                             \
      "coco_accumulate(precision, recall, scores, detections, groundtruths, labels, "              \
      "rec_thresholds)",                                                                           \
      {"precision", TT_ARG_OUT_TENSOR}, {"recall", TT_ARG_OUT_TENSOR},                             \
      {"scores", TT_ARG_OUT_TENSOR}, {"detections", TT_ARG_TENSOR},                                \
      {"groundtruths", TT_ARG_TENSOR}, {"labels", TT_ARG_TENSOR},                                  \
      {"rec_thresholds", TT_ARG_TENSOR})                                                           \
    X(coco_match, "coco_match(rows, groups, dets, gts, iou_thresholds, ious)",                     \
      {"rows", TT_ARG_OUT_TENSOR}, {"groups", TT_ARG_TENSOR}, {"dets", TT_ARG_TENSOR},             \
      {"gts", TT_ARG_TENSOR}, {"iou_thresholds", TT_ARG_TENSOR}, {"ious", TT_ARG_OPT_TENSOR})      \
    X(box_overlap_matrix, "box_overlap_matrix(out, preds, target, kind)",                          \
      {"out", TT_ARG_OUT_TENSOR}, {"preds", TT_ARG_TENSOR}, {"target", TT_ARG_TENSOR},             \
      {"kind", TT_ARG_INT})                                                                        \
    X(box_overlap_sums,                                                                            \
      "box_overlap_sums(out, preds, target, sizes, pred_labels, target_labels, kind, threshold)",  \
      {"out", TT_ARG_OUT_TENSOR}, {"preds", TT_ARG_TENSOR}, {"target", TT_ARG_TENSOR},             \
      {"sizes", TT_ARG_TENSOR}, {"pred_labels", TT_ARG_OPT_TENSOR},                                \
      {"target_labels", TT_ARG_OPT_TENSOR}, {"kind", TT_ARG_INT}, {"threshold", TT_ARG_OPT_FLOAT}) \
    X(panoptic_update,                                                                             \
      "panoptic_update(iou_sum, true_positives, false_positives, false_negatives, preds, target, " \
      "categories, allow_unknown_preds)",                                                          \
      {"iou_sum", TT_ARG_OUT_TENSOR}, {"true_positives", TT_ARG_OUT_TENSOR},                       \
      {"false_positives", TT_ARG_OUT_TENSOR}, {"false_negatives", TT_ARG_OUT_TENSOR},              \
      {"preds", TT_ARG_TENSOR}, {"target", TT_ARG_TENSOR}, {"categories", TT_ARG_TENSOR},          \
      {"allow_unknown_preds", TT_ARG_BOOL})                                                        \
    X(surface_distance,                                                                            \
      "surface_distance(out, preds, target, metric, row_spacing, col_spacing, directed)",          \
      {"out", TT_ARG_OUT_TENSOR}, {"preds", TT_ARG_TENSOR}, {"target", TT_ARG_TENSOR},             \
      {"metric", TT_ARG_INT}, {"row_spacing", TT_ARG_FLOAT}, {"col_spacing", TT_ARG_FLOAT},        \
      {"directed", TT_ARG_BOOL})                                                                   \
    X(mask_counts, "mask_counts(out, preds, target)", {"out", TT_ARG_OUT_TENSOR},                  \
      {"preds", TT_ARG_TENSOR}, {"target", TT_ARG_TENSOR})                                         \
    X(levenshtein, "levenshtein(out, tokens, offsets, substitution_cost)",                         \
      {"out", TT_ARG_OUT_TENSOR}, {"tokens", TT_ARG_TENSOR}, {"offsets", TT_ARG_TENSOR},           \
      {"substitution_cost", TT_ARG_INT})                                                           \
    X(bleu_update, "bleu_update(out, tokens, bounds, groups)", {"out", TT_ARG_OUT_TENSOR},         \
      {"tokens", TT_ARG_TENSOR}, {"bounds", TT_ARG_TENSOR}, {"groups", TT_ARG_TENSOR})             \
    X(chrf_update, "chrf_update(out, sentence, tokens, bounds, groups, n_char_order, beta)",       \
      {"out", TT_ARG_OUT_TENSOR}, {"sentence", TT_ARG_OPT_TENSOR}, {"tokens", TT_ARG_TENSOR},      \
      {"bounds", TT_ARG_TENSOR}, {"groups", TT_ARG_TENSOR}, {"n_char_order", TT_ARG_INT},          \
      {"beta", TT_ARG_FLOAT})                                                                      \
    X(lcs, "lcs(out, a, a_offsets, b, b_offsets)", {"out", TT_ARG_OUT_TENSOR},                     \
      {"a", TT_ARG_TENSOR}, {"a_offsets", TT_ARG_TENSOR}, {"b", TT_ARG_TENSOR},                    \
      {"b_offsets", TT_ARG_TENSOR})                                                                \
    X(perplexity_update, "perplexity_update(total, count, preds, target, ignore_index)",           \
      {"total", TT_ARG_OUT_TENSOR}, {"count", TT_ARG_OUT_TENSOR}, {"preds", TT_ARG_TENSOR},        \
      {"target", TT_ARG_TENSOR}, {"ignore_index", TT_ARG_OPT_INT})                                 \
    X(ssim_moments, "ssim_moments(out, x, y, wh, ww, pad_h, pad_w)", {"out", TT_ARG_OUT_TENSOR},   \
      {"x", TT_ARG_TENSOR}, {"y", TT_ARG_TENSOR}, {"wh", TT_ARG_TENSOR}, {"ww", TT_ARG_TENSOR},    \
      {"pad_h", TT_ARG_INT}, {"pad_w", TT_ARG_INT})                                                \
    X(squared_error, "squared_error(out, x, y, bounds)", {"out", TT_ARG_OUT_TENSOR},               \
      {"x", TT_ARG_TENSOR}, {"y", TT_ARG_TENSOR}, {"bounds", TT_ARG_OPT_TENSOR})                   \
    X(signal_sums, "signal_sums(out, preds, target, zero_mean, group, eps)",                       \
      {"out", TT_ARG_OUT_TENSOR}, {"preds", TT_ARG_TENSOR}, {"target", TT_ARG_TENSOR},             \
      {"zero_mean", TT_ARG_BOOL}, {"group", TT_ARG_INT}, {"eps", TT_ARG_FLOAT})                    \
    X(ter_sentences, "ter_sentences(out, hyp, hyp_offsets, refs, ref_offsets, groups)",            \
      {"out", TT_ARG_OUT_TENSOR}, {"hyp", TT_ARG_TENSOR}, {"hyp_offsets", TT_ARG_TENSOR},          \
      {"refs", TT_ARG_TENSOR}, {"ref_offsets", TT_ARG_TENSOR}, {"groups", TT_ARG_TENSOR})          \
    X(eed_sentences, "eed_sentences(out, hyp, hyp_offsets, refs, ref_offsets, groups, costs)",     \
      {"out", TT_ARG_OUT_TENSOR}, {"hyp", TT_ARG_TENSOR}, {"hyp_offsets", TT_ARG_TENSOR},          \
      {"refs", TT_ARG_TENSOR}, {"ref_offsets", TT_ARG_TENSOR}, {"groups", TT_ARG_TENSOR},          \
      {"costs", TT_ARG_TENSOR})                                                                    \
    X(retrieval_scores, "retrieval_scores(out, query, preds, target, metric, top_k, adaptive_k)",  \
      {"out", TT_ARG_OUT_TENSOR}, {"query", TT_ARG_TENSOR}, {"preds", TT_ARG_TENSOR},              \
      {"target", TT_ARG_TENSOR}, {"metric", TT_ARG_INT}, {"top_k", TT_ARG_INT},                    \
      {"adaptive_k", TT_ARG_BOOL})                                                                 \
    X(retrieval_order,                                                                             \
      "retrieval_order(query_out, score_out, relevance_out, query, preds, target)",                \
      {"query_out", TT_ARG_OUT_TENSOR}, {"score_out", TT_ARG_OUT_TENSOR},                          \
      {"relevance_out", TT_ARG_OUT_TENSOR}, {"query", TT_ARG_TENSOR}, {"preds", TT_ARG_TENSOR},    \
      {"target", TT_ARG_TENSOR})

TT_CPU_KERNELS(TT_DEFINE_KERNEL)

/* ---- introspection -------------------------------------------------------------------------- */

static int put_size(PyObject *dict, const char *key, size_t value)
{
    PyObject *v = PyLong_FromSize_t(value);
    int rc = v ? PyDict_SetItemString(dict, key, v) : -1;
    Py_XDECREF(v);
    return rc;
}

#define LAYOUT(type, name) put_size(d, name, sizeof(type))
#define FIELD(type, name, field) put_size(d, name "." #field, offsetof(type, field))

static PyObject *py_dlpack_layout(PyObject *m, PyObject *unused)
{
    PyObject *d = PyDict_New();
    if (d == NULL)
        return NULL;
    int rc = LAYOUT(tt_DLPackVersion, "DLPackVersion") |
             FIELD(tt_DLPackVersion, "DLPackVersion", major) |
             FIELD(tt_DLPackVersion, "DLPackVersion", minor) | LAYOUT(tt_DLDevice, "DLDevice") |
             FIELD(tt_DLDevice, "DLDevice", device_type) |
             FIELD(tt_DLDevice, "DLDevice", device_id) | LAYOUT(tt_DLDataType, "DLDataType") |
             FIELD(tt_DLDataType, "DLDataType", code) | FIELD(tt_DLDataType, "DLDataType", bits) |
             FIELD(tt_DLDataType, "DLDataType", lanes) | LAYOUT(tt_DLTensor, "DLTensor") |
             FIELD(tt_DLTensor, "DLTensor", data) | FIELD(tt_DLTensor, "DLTensor", device) |
             FIELD(tt_DLTensor, "DLTensor", ndim) | FIELD(tt_DLTensor, "DLTensor", dtype) |
             FIELD(tt_DLTensor, "DLTensor", shape) | FIELD(tt_DLTensor, "DLTensor", strides) |
             FIELD(tt_DLTensor, "DLTensor", byte_offset) |
             LAYOUT(tt_DLManagedTensor, "DLManagedTensor") |
             FIELD(tt_DLManagedTensor, "DLManagedTensor", dl_tensor) |
             FIELD(tt_DLManagedTensor, "DLManagedTensor", manager_ctx) |
             FIELD(tt_DLManagedTensor, "DLManagedTensor", deleter) |
             LAYOUT(tt_DLManagedTensorVersioned, "DLManagedTensorVersioned") |
             FIELD(tt_DLManagedTensorVersioned, "DLManagedTensorVersioned", version) |
             FIELD(tt_DLManagedTensorVersioned, "DLManagedTensorVersioned", manager_ctx) |
             FIELD(tt_DLManagedTensorVersioned, "DLManagedTensorVersioned", deleter) |
             FIELD(tt_DLManagedTensorVersioned, "DLManagedTensorVersioned", flags) |
             FIELD(tt_DLManagedTensorVersioned, "DLManagedTensorVersioned", dl_tensor);
    if (rc != 0) {
        Py_DECREF(d);
        return NULL;
    }
    return d;
}

static PyObject *int_tuple(const int64_t *values, int n)
{
    PyObject *t = PyTuple_New(n);
    for (int i = 0; t != NULL && i < n; i++) {
        PyObject *v = PyLong_FromLongLong(values[i]);
        if (v == NULL) {
            Py_CLEAR(t);
            break;
        }
        PyTuple_SET_ITEM(t, i, v);
    }
    return t;
}

static PyObject *py_dlpack_info(PyObject *m, PyObject *tensor)
{
    module_state *st = get_state(m);
    tt_DLTensor t;
    tt_borrow borrow;
    if (tt_dltensor_from_object(&st->dlpack, tensor, "tensor", &t, &borrow) < 0)
        return NULL;
    static const char *const paths[] = {"exchange", "versioned", "legacy"};
    int64_t strides[TT_MAX_NDIM];
    PyObject *info = NULL, *shape = NULL, *stride_tuple = NULL;
    if (t.ndim < 0 || t.ndim > TT_MAX_NDIM) {
        PyErr_Format(PyExc_ValueError, "tensor: expected at most %d dimensions, got %d",
                     TT_MAX_NDIM, (int)t.ndim);
        goto done;
    }
    for (int d = 0; d < t.ndim; d++) /* NULL strides (compact row-major) are reported as such */
        strides[d] = t.strides ? t.strides[d] : 0;
    shape = int_tuple(t.shape, t.ndim);
    stride_tuple = t.strides ? int_tuple(strides, t.ndim) : Py_NewRef(Py_None);
    if (shape && stride_tuple)
        info =
            Py_BuildValue("{s:i,s:i,s:i,s:i,s:i,s:i,s:O,s:O,s:K,s:K,s:s,s:O}", "device_type",
                          (int)t.device.device_type, "device_id", (int)t.device.device_id, "code",
                          (int)t.dtype.code, "bits", (int)t.dtype.bits, "lanes", (int)t.dtype.lanes,
                          "ndim", (int)t.ndim, "shape", shape, "strides", stride_tuple,
                          "byte_offset", (unsigned long long)t.byte_offset, "data_ptr",
                          (unsigned long long)(uintptr_t)t.data, "path", paths[borrow.path],
                          "versioned", borrow.path == TT_PATH_LEGACY ? Py_False : Py_True);
done:
    Py_XDECREF(shape);
    Py_XDECREF(stride_tuple);
    tt_borrow_release(&borrow);
    return info;
}

static PyObject *py_use_exchange_api(PyObject *m, PyObject *flag)
{
    return tt_use_exchange_api(&get_state(m)->dlpack, flag);
}

/* Test-only: the kernels' SIMD level (kernels/simd.h), to run each path on the same inputs. */
static PyObject *py_simd_level(PyObject *m, PyObject *unused)
{
    return Py_BuildValue("(ii)", (int)tt_simd_level(), (int)tt_simd_max());
}

static PyObject *py_set_simd_level(PyObject *m, PyObject *arg)
{
    const long level = PyLong_AsLong(arg);
    if (level == -1 && PyErr_Occurred())
        return NULL;
    const int previous = level >= 0 && level <= 2 ? tt_simd_set((int)level) : -1;
    if (previous < 0)
        return PyErr_Format(PyExc_ValueError,
                            "level: expected 0 (scalar) to %d (the widest this CPU runs), got %ld",
                            (int)tt_simd_max(), level);
    return PyLong_FromLong(previous);
}

/* ---- module --------------------------------------------------------------------------------- */

static PyMethodDef module_methods[] = {
    TT_KERNELS(TT_KERNEL_METHOD) TT_CPU_KERNELS(TT_KERNEL_METHOD){
        "dlpack_layout", py_dlpack_layout, METH_NOARGS, "Sizes and offsets of the DLPack structs."},
    {"dlpack_info", py_dlpack_info, METH_O, "What the C core reads from a tensor."},
    {"_use_exchange_api", py_use_exchange_api, METH_O,
     "Turn the DLPack C exchange path on or off; returns the previous setting."},
    {"_simd_level", py_simd_level, METH_NOARGS,
     "Test-only: (level in use, widest level available); 0 scalar, 1 SSE2, 2 AVX2."},
    {"_set_simd_level", py_set_simd_level, METH_O,
     "Test-only: run the kernels at this SIMD level; returns the previous one."},
    {NULL, NULL, 0, NULL},
};

static int module_exec(PyObject *module)
{
    return tt_dlpack_cache_init(&get_state(module)->dlpack);
}

static int module_traverse(PyObject *module, visitproc visit, void *arg)
{
    module_state *st = get_state(module);
    if (st != NULL)
        Py_VISIT(st->dlpack.api_type);
    return 0;
}

static int module_clear(PyObject *module)
{
    module_state *st = get_state(module);
    if (st != NULL)
        tt_dlpack_cache_clear(&st->dlpack);
    return 0;
}

TT_MODULE_DEF("torchtally._C", "torchtally's C kernels; the contract is csrc/API.md.",
              module_state);

PyMODINIT_FUNC PyInit__C(void) { return PyModuleDef_Init(&module_def); }
