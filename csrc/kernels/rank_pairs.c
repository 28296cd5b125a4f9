/*
 * rank_pairs.c: the rank correlations' update in one call: preds and target interleaved into the
 * rows [2, D] of each sample, converted to the state's float dtype, every value checked finite
 * in that dtype. The workload: every SpearmanCorrCoef / KendallRankCorrCoef update, mostly small
 * batches (8 to a few thousand samples), where torch needed two reshapes, a stack, a sum and a
 * host read; here one pass checks and one pass writes.
 *
 * Every value is checked before `out` is written.
 */
#include "kernels/rank_pairs.h"

#include <math.h>

/* Element (i, j) of a [N] or [N, D] view as out's float dtype, widened to double (exact). */
static double load(const tt_view *v, int64_t i, int64_t j, int single)
{
    const char *p = v->data + i * tt_step(v, 0) + (v->ndim == 2 ? j * tt_step(v, 1) : 0);
    if (tt_is_float(v->dtype)) {
        const double x = tt_load_score(p, v->dtype);
        return single ? (double)(float)x : x;
    }
    const int64_t x = tt_load_label(p, v->dtype);
    return single ? (double)(float)x : (double)x; /* each a single rounding, as torch's cast */
}

static tt_status check_args(const tt_view *out, const tt_view *preds, const tt_view *target,
                            tt_error *err)
{
    char got[96], want[96];
    const tt_view *in[2] = {preds, target};
    const char *names[2] = {"preds", "target"};
    for (int s = 0; s < 2; s++) {
        if (in[s]->dtype == TT_BOOL)
            return tt_fail(err, TT_ETYPE, names[s], "expected a floating or integer tensor, got %s",
                           tt_describe(in[s], got, sizeof got));
        if (in[s]->ndim != 1 && in[s]->ndim != 2)
            return tt_fail(err, TT_EVALUE, names[s], "expected a tensor [N] or [N, D], got %s",
                           tt_describe(in[s], got, sizeof got));
        tt_status st = tt_check_cpu(in[s], names[s], err);
        if (st != TT_OK)
            return st;
    }
    if (target->ndim != preds->ndim || target->shape[0] != preds->shape[0] ||
        (preds->ndim == 2 && target->shape[1] != preds->shape[1]))
        return tt_fail(err, TT_EVALUE, "target", "expected the shape of preds %s, got %s",
                       tt_describe(preds, want, sizeof want), tt_describe(target, got, sizeof got));
    if (out->dtype != TT_F32 && out->dtype != TT_F64)
        return tt_fail(err, TT_ETYPE, "out", "expected a float32 or float64 tensor, got %s",
                       tt_describe(out, got, sizeof got));
    const int64_t shape[3] = {preds->shape[0], 2, preds->ndim == 2 ? preds->shape[1] : 1};
    return tt_check_out(out, "out", out->dtype, 3, shape, err);
}

/* Column j of a [N] or [N, D] view as a typed pointer and an element stride along N. */
#define TT_COLUMN(T, v, j) ((const T *)(v)->data + ((v)->ndim == 2 ? (j) * (v)->stride[1] : 0))

/* Inputs already of out's dtype (the usual batch), without a dtype switch per element: 1 when
 * the rows were written, 0 when the inputs are of another dtype or hold a value that is not
 * finite (the general path then names it). */
static int write_same_dtype(const tt_view *out, const tt_view *preds, const tt_view *target)
{
    const int64_t n = out->shape[0], d = out->shape[2];
    const int64_t sp = preds->stride[0], st = target->stride[0];
    if (preds->dtype != out->dtype || target->dtype != out->dtype)
        return 0;
    if (out->dtype == TT_F32) {
        for (int64_t j = 0; j < d; j++) {
            const float *p = TT_COLUMN(float, preds, j), *t = TT_COLUMN(float, target, j);
            int bad = 0;
            for (int64_t i = 0; i < n; i++)
                bad |= !isfinite(p[i * sp]) | !isfinite(t[i * st]);
            if (bad)
                return 0;
        }
        float *o = (float *)out->data;
        for (int64_t j = 0; j < d; j++) {
            const float *p = TT_COLUMN(float, preds, j), *t = TT_COLUMN(float, target, j);
            for (int64_t i = 0; i < n; i++) {
                o[i * 2 * d + j] = p[i * sp];
                o[(i * 2 + 1) * d + j] = t[i * st];
            }
        }
        return 1;
    }
    for (int64_t j = 0; j < d; j++) {
        const double *p = TT_COLUMN(double, preds, j), *t = TT_COLUMN(double, target, j);
        int bad = 0;
        for (int64_t i = 0; i < n; i++)
            bad |= !isfinite(p[i * sp]) | !isfinite(t[i * st]);
        if (bad)
            return 0;
    }
    double *o = (double *)out->data;
    for (int64_t j = 0; j < d; j++) {
        const double *p = TT_COLUMN(double, preds, j), *t = TT_COLUMN(double, target, j);
        for (int64_t i = 0; i < n; i++) {
            o[i * 2 * d + j] = p[i * sp];
            o[(i * 2 + 1) * d + j] = t[i * st];
        }
    }
    return 1;
}

tt_status tt_rank_pairs(const tt_view *out, const tt_view *preds, const tt_view *target,
                        tt_error *err)
{
    tt_status st = check_args(out, preds, target, err);
    if (st != TT_OK || write_same_dtype(out, preds, target))
        return st;
    const int64_t n = out->shape[0], d = out->shape[2];
    const int single = out->dtype == TT_F32;
    const tt_view *in[2] = {preds, target};
    const char *names[2] = {"preds", "target"};
    for (int s = 0; s < 2; s++)
        for (int64_t i = 0; i < n; i++)
            for (int64_t j = 0; j < d; j++) {
                const double x = load(in[s], i, j, single);
                if (!isfinite(x))
                    return tt_fail(err, TT_EVALUE, names[s],
                                   "expected values finite in the %s state, got %s at flat index "
                                   "%lld",
                                   single ? "float32" : "float64",
                                   x != x ? "nan" : (x > 0 ? "inf" : "-inf"),
                                   (long long)(i * d + j));
            }
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < d; j++)
            for (int s = 0; s < 2; s++) {
                const double x = load(in[s], i, j, single);
                if (single)
                    ((float *)out->data)[(i * 2 + s) * d + j] = (float)x;
                else
                    ((double *)out->data)[(i * 2 + s) * d + j] = x;
            }
    return TT_OK;
}
