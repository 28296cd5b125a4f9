/*
 * host_kernels.h: the methods of torchtally._C that have no CUDA build (their inputs live on the
 * host, or other devices take the torch reference): TT_CPU_KERNELS lists each with its arguments,
 * as binding.h's TT_KERNELS does for the kernels with a CUDA build, and its thunk (host_kernels.c)
 * calls the kernel. module.c defines and registers the methods from this table.
 */
#ifndef TT_CPU_HOST_KERNELS_H
#define TT_CPU_HOST_KERNELS_H

#include "core/binding.h"

#define TT_CPU_KERNELS(X)                                                                          \
    X(stat_finish, "stat_finish(out, state, requests, layout)", {"out", TT_ARG_OUT_TENSOR},        \
      {"state", TT_ARG_TENSOR}, {"requests", TT_ARG_TENSOR}, {"layout", TT_ARG_INT})               \
    X(binned_finish, "binned_finish(out, hist, metric)", {"out", TT_ARG_OUT_TENSOR},               \
      {"hist", TT_ARG_TENSOR}, {"metric", TT_ARG_INT})                                             \
    X(exact_curve_points, "exact_curve_points(points, size, scores, labels, task, column)",        \
      {"points", TT_ARG_OUT_TENSOR}, {"size", TT_ARG_OUT_TENSOR}, {"scores", TT_ARG_TENSOR},       \
      {"labels", TT_ARG_TENSOR}, {"task", TT_ARG_INT}, {"column", TT_ARG_INT})                     \
    X(exact_curve_rates, "exact_curve_rates(curves, sizes, scores, labels, task, kind)",           \
      {"curves", TT_ARG_OUT_TENSOR}, {"sizes", TT_ARG_OUT_TENSOR}, {"scores", TT_ARG_TENSOR},      \
      {"labels", TT_ARG_TENSOR}, {"task", TT_ARG_INT}, {"kind", TT_ARG_INT})                       \
    X(exact_curve_finish, "exact_curve_finish(out, scores, labels, task, metric, level)",          \
      {"out", TT_ARG_OUT_TENSOR}, {"scores", TT_ARG_TENSOR}, {"labels", TT_ARG_TENSOR},            \
      {"task", TT_ARG_INT}, {"metric", TT_ARG_INT}, {"level", TT_ARG_FLOAT})                       \
    X(curve_rows, "curve_rows(scores, labels, size, preds, target, task, ignore_index, convert)",  \
      {"scores", TT_ARG_OUT_TENSOR}, {"labels", TT_ARG_OUT_TENSOR}, {"size", TT_ARG_OUT_TENSOR},   \
      {"preds", TT_ARG_TENSOR}, {"target", TT_ARG_TENSOR}, {"task", TT_ARG_INT},                   \
      {"ignore_index", TT_ARG_OPT_INT}, {"convert", TT_ARG_BOOL})                                  \
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
    X(class_argmax, "class_argmax(out, scores)", {"out", TT_ARG_OUT_TENSOR},                       \
      {"scores", TT_ARG_TENSOR})                                                                   \
    X(label_counts, "label_counts(out, preds, target, from_scores)", {"out", TT_ARG_OUT_TENSOR},   \
      {"preds", TT_ARG_TENSOR}, {"target", TT_ARG_TENSOR}, {"from_scores", TT_ARG_INT})            \
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
    X(feature_rows, "feature_rows(out, x)", {"out", TT_ARG_OUT_TENSOR}, {"x", TT_ARG_TENSOR})      \
    X(spectral_angles, "spectral_angles(out, x, y)", {"out", TT_ARG_OUT_TENSOR},                   \
      {"x", TT_ARG_TENSOR}, {"y", TT_ARG_TENSOR})                                                  \
    X(total_variation, "total_variation(out, img)", {"out", TT_ARG_OUT_TENSOR},                    \
      {"img", TT_ARG_TENSOR})                                                                      \
    X(toeplitz_solve, "toeplitz_solve(out, r, b)", {"out", TT_ARG_OUT_TENSOR},                     \
      {"r", TT_ARG_TENSOR}, {"b", TT_ARG_TENSOR})                                                  \
    X(signal_sums, "signal_sums(out, preds, target, zero_mean, group, eps)",                       \
      {"out", TT_ARG_OUT_TENSOR}, {"preds", TT_ARG_TENSOR}, {"target", TT_ARG_TENSOR},             \
      {"zero_mean", TT_ARG_BOOL}, {"group", TT_ARG_INT}, {"eps", TT_ARG_FLOAT})                    \
    X(contingency_rows, "contingency_rows(out, size, table, preds, target)",                       \
      {"out", TT_ARG_OUT_TENSOR}, {"size", TT_ARG_OUT_TENSOR}, {"table", TT_ARG_OPT_TENSOR},       \
      {"preds", TT_ARG_TENSOR}, {"target", TT_ARG_TENSOR})                                         \
    X(cluster_moments, "cluster_moments(out, size, block, data, labels)",                          \
      {"out", TT_ARG_OUT_TENSOR}, {"size", TT_ARG_OUT_TENSOR}, {"block", TT_ARG_TENSOR},           \
      {"data", TT_ARG_TENSOR}, {"labels", TT_ARG_TENSOR})                                          \
    X(cluster_distances, "cluster_distances(out, data, labels, keys, centroids, p)",               \
      {"out", TT_ARG_OUT_TENSOR}, {"data", TT_ARG_TENSOR}, {"labels", TT_ARG_TENSOR},              \
      {"keys", TT_ARG_TENSOR}, {"centroids", TT_ARG_TENSOR}, {"p", TT_ARG_FLOAT})                  \
    X(error_sums, "error_sums(sums, count, rows, x, y, kind, param)", {"sums", TT_ARG_OPT_TENSOR}, \
      {"count", TT_ARG_OPT_TENSOR}, {"rows", TT_ARG_OPT_TENSOR}, {"x", TT_ARG_TENSOR},             \
      {"y", TT_ARG_TENSOR}, {"kind", TT_ARG_INT}, {"param", TT_ARG_FLOAT})                         \
    X(residual_moments, "residual_moments(state, x, y)", {"state", TT_ARG_OUT_TENSOR},             \
      {"x", TT_ARG_TENSOR}, {"y", TT_ARG_TENSOR})                                                  \
    X(threshold_counts, "threshold_counts(counts, x, y, threshold)",                               \
      {"counts", TT_ARG_OUT_TENSOR}, {"x", TT_ARG_TENSOR}, {"y", TT_ARG_TENSOR},                   \
      {"threshold", TT_ARG_FLOAT})                                                                 \
    X(rating_sums, "rating_sums(out, ratings)", {"out", TT_ARG_OUT_TENSOR},                        \
      {"ratings", TT_ARG_TENSOR})                                                                  \
    X(rating_update, "rating_update(totals, sums, bounds, ratings)",                               \
      {"totals", TT_ARG_OUT_TENSOR}, {"sums", TT_ARG_OUT_TENSOR}, {"bounds", TT_ARG_OUT_TENSOR},   \
      {"ratings", TT_ARG_TENSOR})                                                                  \
    X(lip_errors, "lip_errors(out, vertices_pred, vertices_gt, lips)", {"out", TT_ARG_OUT_TENSOR}, \
      {"vertices_pred", TT_ARG_TENSOR}, {"vertices_gt", TT_ARG_TENSOR}, {"lips", TT_ARG_TENSOR})   \
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
      {"target", TT_ARG_TENSOR})                                                                   \
    X(average_ranks, "average_ranks(out, x)", {"out", TT_ARG_OUT_TENSOR}, {"x", TT_ARG_TENSOR})    \
    X(crps_scores, "crps_scores(out, preds, target)", {"out", TT_ARG_OUT_TENSOR},                  \
      {"preds", TT_ARG_TENSOR}, {"target", TT_ARG_TENSOR})                                         \
    X(kendall_counts, "kendall_counts(out, pairs)", {"out", TT_ARG_OUT_TENSOR},                    \
      {"pairs", TT_ARG_TENSOR})                                                                    \
    X(rank_pairs, "rank_pairs(out, preds, target)", {"out", TT_ARG_OUT_TENSOR},                    \
      {"preds", TT_ARG_TENSOR}, {"target", TT_ARG_TENSOR})                                         \
    X(retrieval_rows,                                                                              \
      "retrieval_rows(query_out, score_out, relevance_out, indexes, preds, target)",               \
      {"query_out", TT_ARG_OUT_TENSOR}, {"score_out", TT_ARG_OUT_TENSOR},                          \
      {"relevance_out", TT_ARG_OUT_TENSOR}, {"indexes", TT_ARG_TENSOR}, {"preds", TT_ARG_TENSOR},  \
      {"target", TT_ARG_TENSOR})

#define TT_DECLARE_THUNK(name, ...)                                                                \
    tt_status run_##name(const void *ctx, const tt_args *a, tt_error *err);
TT_CPU_KERNELS(TT_DECLARE_THUNK)
#undef TT_DECLARE_THUNK

#endif /* TT_CPU_HOST_KERNELS_H */
