/*
 * crps_scores.c: the CRPS of every sample of an ensemble forecast in one pass. A sample's pairwise
 * term is read off its sorted members (sum_{i,j} |x_i - x_j| = 2 sum_k (2k - M + 1) x_(k)), so
 * a sample costs a sort of its M members, never an M x M matrix. The workload: every
 * ContinuousRankedProbabilityScore update, mostly small batches (8 to a few thousand samples
 * of 5 to 100 members), where torch needed a cast, a sort, and eight more dispatches and a
 * host read for the finite check; here the members are sorted in place in a row of scratch
 * (insertion sort: M is small) and the score summed in float64.
 *
 * Every value is checked (finite) before `out` is written.
 */
#include "kernels/crps_scores.h"

#include <math.h>
#include <stdlib.h>

static tt_status check_args(const tt_view *out, const tt_view *preds, const tt_view *target,
                            tt_error *err)
{
    char got[96];
    const tt_view *in[2] = {preds, target};
    const char *names[2] = {"preds", "target"};
    for (int s = 0; s < 2; s++)
        if (in[s]->dtype == TT_BOOL)
            return tt_fail(err, TT_ETYPE, names[s], "expected a floating or integer tensor, got %s",
                           tt_describe(in[s], got, sizeof got));
    if (preds->ndim != 2 || preds->shape[1] < 2)
        return tt_fail(err, TT_EVALUE, "preds", "expected a tensor [N, M] with M >= 2, got %s",
                       tt_describe(preds, got, sizeof got));
    if (target->ndim != 1 || target->shape[0] != preds->shape[0])
        return tt_fail(err, TT_EVALUE, "target", "expected a tensor [%lld], got %s",
                       (long long)preds->shape[0], tt_describe(target, got, sizeof got));
    tt_status st = tt_check_cpu(preds, "preds", err);
    if (st == TT_OK)
        st = tt_check_cpu(target, "target", err);
    const int64_t shape[1] = {preds->shape[0]};
    if (st == TT_OK)
        st = tt_check_out(out, "out", TT_F64, 1, shape, err);
    return st;
}

/* The first non-finite value of v ([N] or [N, M]) as a flat index, or -1. */
static int64_t first_non_finite(const tt_view *v)
{
    const int64_t n = v->shape[0], m = v->ndim == 2 ? v->shape[1] : 1;
    if (!tt_is_float(v->dtype))
        return -1;
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < m; j++) {
            const char *p = v->data + i * tt_step(v, 0) + (v->ndim == 2 ? j * tt_step(v, 1) : 0);
            if (!isfinite(tt_load_score(p, v->dtype)))
                return i * m + j;
        }
    return -1;
}

tt_status tt_crps_scores(const tt_view *out, const tt_view *preds, const tt_view *target,
                         tt_error *err)
{
    tt_status st = check_args(out, preds, target, err);
    if (st != TT_OK)
        return st;
    const tt_view *in[2] = {preds, target};
    const char *names[2] = {"preds", "target"};
    for (int s = 0; s < 2; s++) {
        const int64_t bad = first_non_finite(in[s]);
        if (bad >= 0)
            return tt_fail(err, TT_EVALUE, names[s], "expected finite values, at flat index %lld",
                           (long long)bad);
    }
    const int64_t n = preds->shape[0], m = preds->shape[1];
    double *x = malloc((size_t)m * sizeof *x);
    if (x == NULL)
        return tt_fail(err, TT_ENOMEM, "out", "no memory for %lld members", (long long)m);
    const int64_t rs = tt_step(preds, 0), cs = tt_step(preds, 1), ts = tt_step(target, 0);
    const double mm = (double)m * (double)m;
    double *dst = (double *)out->data;
    for (int64_t i = 0; i < n; i++) {
        const double y = tt_load_score(target->data + i * ts, target->dtype);
        for (int64_t k = 0; k < m; k++) { /* insertion sort of the members */
            const double v = tt_load_score(preds->data + i * rs + k * cs, preds->dtype);
            int64_t j = k;
            for (; j > 0 && v < x[j - 1]; j--)
                x[j] = x[j - 1];
            x[j] = v;
        }
        double error = 0.0, spread = 0.0;
        for (int64_t k = 0; k < m; k++) {
            error += fabs(x[k] - y);
            spread += x[k] * ((double)(2 * k - m + 1) / mm);
        }
        dst[i] = error / (double)m - spread;
    }
    free(x);
    return TT_OK;
}
