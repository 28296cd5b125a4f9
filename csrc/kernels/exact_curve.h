/*
 * exact_curve.h: the exact curves (thresholds=None) of a curve metric's cat state: per column
 * (class or label) the scores sorted in descending order, one point per distinct score with the
 * cumulative true and false positives there, or the AUROC / average precision read off those
 * points without materialising them. Contract in csrc/API_CURVES.md;
 * kernels/reference/exact_curve.py is the oracle. Outputs are untouched
 * on failure.
 */
#ifndef TT_EXACT_CURVE_H
#define TT_EXACT_CURVE_H

#include "core/view.h"
#include "kernels/binned_finish.h"

/* How a column's labels read (the state layouts of functional/curves/update.py). */
typedef enum {
    TT_EXACT_BINARY = 0,     /* labels [N]: positive where label == 1, every sample counted */
    TT_EXACT_MULTICLASS = 1, /* labels [N] class ids: positive in column k where label == k */
    TT_EXACT_MULTILABEL = 2, /* labels [N, K]: 2 is ignored, positive where label == 1 */
} tt_exact_task;

/* points float64 [3, N] (C-contiguous): rows (threshold, tp, fp) of column `column`, its
 * distinct scores in descending order; size int64 [1]: how many points were written. */
tt_status tt_exact_curve_points(const tt_view *points, const tt_view *size, const tt_view *scores,
                                const tt_view *labels, int64_t task, int64_t column, tt_error *err);

/* The curves compute() returns, in float32 (exact_curve_rates' `kind`). */
typedef enum {
    TT_EXACT_ROC = 0,            /* fpr, tpr, thresholds: the origin at 1.0, then descending */
    TT_EXACT_PR_NAN_RECALL = 1,  /* precision, recall, thresholds ascending; no positive: NaN */
    TT_EXACT_PR_UNIT_RECALL = 2, /* the same; a column without positives has recall 1 */
} tt_exact_curve_kind;

/* curves float32 [K, 3, N + 1], sizes int64 [K, 3] (both C-contiguous): per column its curve's
 * three rows and (points M, positives, negatives). ROC rows hold M + 1 values; PR rows M + 1
 * (the end point recall 0, precision 1) and M thresholds. The rest is untouched. */
tt_status tt_exact_curve_rates(const tt_view *curves, const tt_view *sizes, const tt_view *scores,
                               const tt_view *labels, int64_t task, int64_t kind, tt_error *err);

/* The readouts past binned_finish's two (0 AUROC, 1 average precision): on the float32 ROC
 * curve, the equal error rate and the best rate at a minimum `level` of the other one; on the
 * precision-recall curve, the best recall at a minimum precision. */
typedef enum {
    TT_EXACT_EER = 2,
    TT_EXACT_SENSITIVITY_AT_SPECIFICITY = 3,
    TT_EXACT_SPECIFICITY_AT_SENSITIVITY = 4,
    TT_EXACT_RECALL_AT_PRECISION = 5, /* on the float32 precision-recall curve */
} tt_exact_readout;

/* out float64 [K, 4]: per column (value, positives, negatives, threshold); the threshold of
 * metrics 3 to 5 (NaN for the others). */
tt_status tt_exact_curve_finish(const tt_view *out, const tt_view *scores, const tt_view *labels,
                                int64_t task, int64_t metric, double level, tt_error *err);

#endif /* TT_EXACT_CURVE_H */
