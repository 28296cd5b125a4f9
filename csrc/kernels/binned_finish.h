/*
 * binned_finish.h: the binned curves' readouts (AUROC, average precision) of every column of a
 * score histogram, in one pass per column. Contract in csrc/API.md; the torch functions of
 * torchtally.functional.curves.compute are the oracle. `out` is untouched on failure.
 */
#ifndef TT_BINNED_FINISH_H
#define TT_BINNED_FINISH_H

#include "core/view.h"

typedef enum {
    TT_CURVE_AUROC = 0, /* trapezoidal area under (fpr, tpr); NaN without positives or negatives */
    TT_CURVE_AVERAGE_PRECISION = 1, /* sum of recall steps times precision; 0 without positives */
} tt_curve_metric;

/* out float64 [R, 3]: per column (value, positives, negatives). hist int64 [R, T + 1, 2] as
 * binned_update leaves it (bin b: scores with exactly b thresholds <= score). */
tt_status tt_binned_finish(const tt_view *out, const tt_view *hist, int64_t metric, tt_error *err);

#endif /* TT_BINNED_FINISH_H */
