/*
 * binned_finish.c: AUROC and average precision of each column of a binned score histogram, as
 * torchtally.functional.curves.compute forms them from the cumulative counts: at the T
 * thresholds in descending order, tp(j) and fp(j) count the scores at or above threshold j
 * (the histogram's suffix sums past the threshold's bin); rates and precisions divide once in
 * float64. The torch path builds a dozen [R, T] intermediates for the same numbers; here a
 * column is one walk over its bins, with no allocation.
 */
#include "kernels/binned_finish.h"

#include <math.h>

/* One column's value from its bins h[b][0 negatives, 1 positives], b = 0 .. bins - 1. */
static double column_value(const int64_t *h, int64_t bins, int64_t metric, double *pos_out,
                           double *neg_out)
{
    int64_t pos = 0, neg = 0;
    for (int64_t b = 0; b < bins; b++) {
        neg += h[2 * b];
        pos += h[2 * b + 1];
    }
    *pos_out = (double)pos;
    *neg_out = (double)neg;
    /* thresholds descending: threshold j (ascending index T - 1 - j) counts bins > T - 1 - j */
    int64_t tp = 0, fp = 0;
    double area = 0.0, steps = 0.0, prev_fpr = 0.0, prev_tpr = 0.0, prev_tp = 0.0;
    for (int64_t b = bins - 1; b >= 1; b--) {
        tp += h[2 * b + 1];
        fp += h[2 * b];
        const double tpd = (double)tp, fpd = (double)fp;
        if (metric == TT_CURVE_AUROC) {
            const double fpr = neg > 0 ? fpd / (double)neg : 0.0;
            const double tpr = pos > 0 ? tpd / (double)pos : 0.0;
            if (b < bins - 1) /* a trapezoid from the point before (torch.trapezoid's terms) */
                area += (fpr - prev_fpr) * (tpr + prev_tpr);
            prev_fpr = fpr;
            prev_tpr = tpr;
        } else {
            const double precision = tp + fp > 0 ? tpd / (tpd + fpd) : 0.0;
            steps += (tpd - prev_tp) * precision;
            prev_tp = tpd;
        }
    }
    if (metric == TT_CURVE_AUROC)
        return pos > 0 && neg > 0 ? area / 2 : NAN;
    return pos > 0 ? steps / (double)pos : 0.0;
}

tt_status tt_binned_finish(const tt_view *out, const tt_view *hist, int64_t metric, tt_error *err)
{
    char got[96];
    if (metric != TT_CURVE_AUROC && metric != TT_CURVE_AVERAGE_PRECISION)
        return tt_fail(err, TT_EVALUE, "metric",
                       "expected 0 (AUROC) or 1 (average precision), got %lld", (long long)metric);
    if (hist->dtype != TT_I64 || hist->ndim != 3 || hist->shape[2] != 2 || hist->shape[1] < 2)
        return tt_fail(err, hist->dtype != TT_I64 ? TT_ETYPE : TT_EVALUE, "hist",
                       "expected int64 [R, T + 1, 2] with T >= 1, got %s",
                       tt_describe(hist, got, sizeof got));
    tt_status st = tt_check_out(hist, "hist", TT_I64, 3, hist->shape, err);
    if (st != TT_OK)
        return st;
    const int64_t columns = hist->shape[0], bins = hist->shape[1];
    const int64_t shape[2] = {columns, 3};
    if ((st = tt_check_out(out, "out", TT_F64, 2, shape, err)) != TT_OK)
        return st;
    const int64_t *h = (const int64_t *)hist->data;
    double *o = (double *)out->data;
    for (int64_t r = 0; r < columns; r++)
        o[3 * r] = column_value(h + r * bins * 2, bins, metric, &o[3 * r + 1], &o[3 * r + 2]);
    return TT_OK;
}
