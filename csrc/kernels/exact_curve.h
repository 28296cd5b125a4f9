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
