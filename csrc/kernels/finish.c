/*
 * finish.c: a count state's metric values, each request's the way
 * torchtally.functional.classification.compute forms it (which follows torchmetrics 1.9):
 * one-vs-rest int64 counts per class (tp, fp, tn, fn), each ratio divided once in float64 (a
 * zero denominator gives the request's zero_division), averages summed in float64 and divided
 * once, every value rounded once to out's dtype. The counts are formed once per call and shared
 * by its requests, so a collection of accuracy, precision, recall and F1 over one state pays
 * one call. Everything is checked (layout, shapes, request codes, each request's span of out)
 * before anything is written.
 */
#include "kernels/finish.h"

#include <math.h>
#include <stdlib.h>

typedef struct {
    int64_t classes;
    tt_stats_layout layout;
    int64_t *tp, *fp, *tn, *fn; /* [classes] each, one allocation */
} counts;

/* The state's one-vs-rest counts. */
static void load_counts(counts *c, const int64_t *s)
{
    const int64_t k = c->classes;
    if (c->layout == TT_STATS_MULTICLASS) {
        int64_t total = 0;
        for (int64_t i = 0; i < k; i++) {
            c->fp[i] = 0;
            c->fn[i] = 0;
        }
        for (int64_t t = 0; t < k; t++)
            for (int64_t p = 0; p < k; p++) {
                const int64_t n = s[t * k + p];
                total += n;
                c->fn[t] += t == p ? 0 : n; /* the row sum less the diagonal */
                c->fp[p] += t == p ? 0 : n; /* the column sum less the diagonal */
            }
        for (int64_t i = 0; i < k; i++) {
            c->tp[i] = s[i * k + i];
            c->tn[i] = total - c->tp[i] - c->fp[i] - c->fn[i];
        }
    } else if (c->layout == TT_STATS_TOPK) {
        int64_t total = 0;
        for (int64_t i = 0; i < k; i++)
            total += s[i * 3 + 2];
        for (int64_t i = 0; i < k; i++) {
            c->tp[i] = s[i * 3 + 1];
            c->fp[i] = s[i * 3] - s[i * 3 + 1];
            c->fn[i] = s[i * 3 + 2] - s[i * 3 + 1];
            c->tn[i] = total - c->tp[i] - c->fp[i] - c->fn[i];
        }
    } else { /* [L, 2, 2]: [label, target, prediction] */
        for (int64_t i = 0; i < k; i++) {
            c->tn[i] = s[i * 4];
            c->fp[i] = s[i * 4 + 1];
            c->fn[i] = s[i * 4 + 2];
            c->tp[i] = s[i * 4 + 3];
        }
    }
}

static double ratio(double num, double den, double zero_division)
{
    return den != 0.0 ? num / den : zero_division;
}

typedef struct {
    tt_finish_metric metric;
    tt_average average;
    double zero_division, parameter; /* parameter: F-beta's beta, kappa's tt_kappa_weights */
    int64_t ignore_index;            /* Jaccard's class left out, or -1 */
} request;

/* The request's score of class i (before any average). */
static double class_score(const counts *c, const request *r, int64_t i)
{
    const double tp = (double)c->tp[i], fp = (double)c->fp[i], tn = (double)c->tn[i],
                 fn = (double)c->fn[i];
    const int multiclass = c->layout == TT_STATS_MULTICLASS || c->layout == TT_STATS_TOPK;
    /* accuracy per class: the recall (multiclass), the share of right elements (otherwise) */
    const double correct = multiclass ? tp : tp + tn;
    const double all = multiclass ? tp + fn : tp + tn + fp + fn;
    const double b2 = r->parameter * r->parameter;
    switch (r->metric) {
    case TT_FINISH_ACCURACY: return ratio(correct, all, 0.0);
    case TT_FINISH_HAMMING: return 1.0 - ratio(correct, all, 0.0);
    case TT_FINISH_PRECISION: return ratio(tp, tp + fp, r->zero_division);
    case TT_FINISH_RECALL: return ratio(tp, tp + fn, r->zero_division);
    case TT_FINISH_FBETA:
        return ratio((1 + b2) * tp, (1 + b2) * tp + b2 * fn + fp, r->zero_division);
    case TT_FINISH_SPECIFICITY: return ratio(tn, tn + fp, 0.0);
    case TT_FINISH_JACCARD: return ratio(tp, tp + fp + fn, r->zero_division);
    case TT_FINISH_NPV: return ratio(tn, tn + fn, r->zero_division);
    default: return 0.0; /* the whole-matrix metrics are not per class (whole_matrix below) */
    }
}

/* Matthews' correlation and Cohen's kappa: one value of the whole matrix, no average. */
static int is_whole_matrix(double metric)
{
    return metric == TT_FINISH_MATTHEWS || metric == TT_FINISH_KAPPA;
}

/* Pooled counts ("micro"), as the per-class formulas over the sums. */
static double micro_score(const counts *c, const request *r)
{
    counts pooled = {.classes = 1, .layout = c->layout};
    int64_t tp = 0, fp = 0, tn = 0, fn = 0;
    for (int64_t i = 0; i < c->classes; i++) {
        tp += c->tp[i];
        fp += c->fp[i];
        tn += c->tn[i];
        fn += c->fn[i];
    }
    if (r->metric == TT_FINISH_JACCARD) {
        /* the ignored class's union leaves the denominator (its tp stays in the numerator) */
        double den = (double)tp + (double)fp + (double)fn;
        if (r->ignore_index >= 0 && c->layout == TT_STATS_MULTICLASS) {
            const int64_t j = r->ignore_index;
            den -= (double)(c->tp[j] + c->fp[j] + c->fn[j]);
        }
        return ratio((double)tp, den, r->zero_division);
    }
    pooled.tp = &tp;
    pooled.fp = &fp;
    pooled.tn = &tn;
    pooled.fn = &fn;
    return class_score(&pooled, r, 0);
}

/* Whether class i enters a "macro" mean: multiclass leaves out a class that never occurs
 * (tp + fp + fn == 0), or, for accuracy, precision, recall and negative predictive value of
 * top-k counts, one without support (tp + fn == 0); Jaccard also leaves out the ignored class. */
static int macro_counts(const counts *c, const request *r, int64_t i)
{
    if (r->metric == TT_FINISH_JACCARD && i == r->ignore_index && c->layout == TT_STATS_MULTICLASS)
        return 0;
    if (c->layout == TT_STATS_TOPK &&
        (r->metric == TT_FINISH_ACCURACY || r->metric == TT_FINISH_PRECISION ||
         r->metric == TT_FINISH_RECALL || r->metric == TT_FINISH_NPV))
        return c->tp[i] + c->fn[i] != 0;
    if (c->layout == TT_STATS_MULTICLASS || c->layout == TT_STATS_TOPK)
        return c->tp[i] + c->fp[i] + c->fn[i] != 0;
    return 1;
}

/* "macro" or "weighted": sum(w * score) / sum(w); Jaccard divides plainly (0 / 0 is NaN, as
 * torchmetrics), the others give 0 for a zero total weight. */
static double averaged(const counts *c, const request *r)
{
    double num = 0.0, den = 0.0;
    for (int64_t i = 0; i < c->classes; i++) {
        const double w = r->average == TT_AVERAGE_WEIGHTED ? (double)(c->tp[i] + c->fn[i])
                                                           : (double)macro_counts(c, r, i);
        num += w * class_score(c, r, i);
        den += w;
    }
    return r->metric == TT_FINISH_JACCARD ? num / den : ratio(num, den, 0.0);
}

/* ---- metrics of the whole matrix --------------------------------------------------------- */

/* Entry (t, p) of the matrix the whole-matrix metrics read, as float64: the [C, C] matrix itself,
 * the binary [2, 2], or the multilabel [L, 2, 2] pooled over labels. */
static double entry(const int64_t *s, int64_t labels, tt_stats_layout layout, int64_t side,
                    int64_t t, int64_t p)
{
    if (layout != TT_STATS_MULTILABEL)
        return (double)s[t * side + p];
    int64_t sum = 0;
    for (int64_t l = 0; l < labels; l++)
        sum += s[l * 4 + t * 2 + p];
    return (double)sum;
}

/* torchmetrics' 2 x 2 value when all targets or all predictions are one class (scikit-learn
 * gives 0): the correlation with float32's epsilon added to the four marginals. */
static double matthews_one_sided(double tp, double fp, double tn, double fn)
{
    const double eps = 1.1920928955078125e-07; /* float32's epsilon */
    double num;
    if (fn == 0 && tn == 0)
        num = tp - fp;
    else if (fp == 0 && tn == 0)
        num = tp - fn;
    else if (tp == 0 && fn == 0)
        num = tn - fp;
    else
        num = tn - fn;
    const double den = (tp + fp + eps) * (tp + fn + eps) * (tn + fp + eps) * (tn + fn + eps);
    return sqrt(eps) * num / sqrt(den);
}

/* Matthews' correlation or Cohen's kappa of the state's matrix (compute.matthews_corrcoef and
 * compute.cohen_kappa's formulas, in float64). Needs `scratch` of 2 * side doubles. */
static double whole_matrix(const int64_t *s, int64_t classes, tt_stats_layout layout,
                           const request *r, double *scratch)
{
    const int64_t side = layout == TT_STATS_MULTICLASS ? classes : 2;
    double *row = scratch, *col = scratch + side, total = 0.0, trace = 0.0;
    for (int64_t i = 0; i < side; i++)
        row[i] = col[i] = 0.0;
    for (int64_t t = 0; t < side; t++)
        for (int64_t p = 0; p < side; p++) {
            const double n = entry(s, classes, layout, side, t, p);
            row[t] += n;
            col[p] += n;
            total += n;
            trace += t == p ? n : 0.0;
        }
    if (r->metric == TT_FINISH_KAPPA) {
        double observed = 0.0, expected = 0.0;
        for (int64_t t = 0; t < side; t++)
            for (int64_t p = 0; p < side; p++) {
                const double d = (double)(t - p);
                const double w = r->parameter == TT_KAPPA_LINEAR      ? fabs(d)
                                 : r->parameter == TT_KAPPA_QUADRATIC ? d * d
                                                                      : (double)(t != p);
                observed += w * entry(s, classes, layout, side, t, p);
                expected += w * (row[t] * col[p] / total);
            }
        return 1.0 - observed / expected;
    }
    if (side == 2) {
        const double tn = entry(s, classes, layout, 2, 0, 0),
                     fp = entry(s, classes, layout, 2, 0, 1);
        const double fn = entry(s, classes, layout, 2, 1, 0),
                     tp = entry(s, classes, layout, 2, 1, 1);
        if (tp + tn != 0 && fp + fn == 0)
            return 1.0;
        if (tp + tn == 0 && fp + fn != 0)
            return -1.0;
    }
    double true_pred = 0.0, pred2 = 0.0, true2 = 0.0;
    for (int64_t i = 0; i < side; i++) {
        true_pred += row[i] * col[i];
        pred2 += col[i] * col[i];
        true2 += row[i] * row[i];
    }
    const double cov = trace * total - true_pred;
    const double var_pred = total * total - pred2, var_true = total * total - true2;
    if (var_pred * var_true != 0.0)
        return cov / sqrt(var_pred * var_true);
    if (side != 2)
        return 0.0;
    return matthews_one_sided(
        entry(s, classes, layout, 2, 1, 1), entry(s, classes, layout, 2, 0, 1),
        entry(s, classes, layout, 2, 0, 0), entry(s, classes, layout, 2, 1, 0));
}

static void put(const tt_view *out, int64_t at, double value)
{
    if (out->dtype == TT_F32)
        ((float *)out->data)[at] = (float)value;
    else
        ((double *)out->data)[at] = value;
}

static int64_t numel(const tt_view *v)
{
    int64_t n = 1;
    for (int d = 0; d < v->ndim; d++)
        n *= v->shape[d];
    return n;
}

static tt_status check_state(const tt_view *state, int64_t layout, int64_t *classes, tt_error *err)
{
    char got[96];
    const int64_t *s = state->shape;
    int ok = state->dtype == TT_I64;
    switch (layout) {
    case TT_STATS_MULTICLASS: ok = ok && state->ndim == 2 && s[0] == s[1] && s[0] > 0; break;
    case TT_STATS_TOPK: ok = ok && state->ndim == 2 && s[1] == 3 && s[0] > 0; break;
    case TT_STATS_BINARY:
        ok = ok && ((state->ndim == 2 && s[0] == 2 && s[1] == 2) ||
                    (state->ndim == 3 && s[0] == 1 && s[1] == 2 && s[2] == 2));
        break;
    case TT_STATS_MULTILABEL:
        ok = ok && state->ndim == 3 && s[0] > 0 && s[1] == 2 && s[2] == 2;
        break;
    default:
        return tt_fail(err, TT_EVALUE, "layout",
                       "expected 0 (multiclass), 1 (top-k), 2 (binary) "
                       "or 3 (multilabel), got %lld",
                       (long long)layout);
    }
    if (!ok) {
        static const char *const expected[] = {"int64 [C, C]", "int64 [C, 3]",
                                               "int64 [2, 2] or [1, 2, 2]", "int64 [L, 2, 2]"};
        return tt_fail(err, state->dtype == TT_I64 ? TT_EVALUE : TT_ETYPE, "state",
                       "expected %s for layout %lld, got %s", expected[layout], (long long)layout,
                       tt_describe(state, got, sizeof got));
    }
    *classes = layout == TT_STATS_BINARY ? 1 : s[0];
    return tt_check_out(state, "state", TT_I64, state->ndim, state->shape, err);
}

/* Reads row `i` of the requests into *r and its offset, checking every field against the
 * state's class count and out's size. */
static tt_status read_request(const tt_view *requests, int64_t i, int64_t classes, int64_t layout,
                              int64_t out_size, request *r, int64_t *offset, tt_error *err)
{
    const double *row = (const double *)requests->data + i * TT_FINISH_FIELDS;
    const double metric = row[TT_FINISH_METRIC], average = row[TT_FINISH_AVERAGE];
    const double ignore = row[TT_FINISH_IGNORE_INDEX], at = row[TT_FINISH_OFFSET];
    if (!(metric >= 0 && metric <= TT_FINISH_NPV && metric == floor(metric)))
        return tt_fail(err, TT_EVALUE, "requests", "row %lld: metric code %g is not one of 0..%d",
                       (long long)i, metric, TT_FINISH_NPV);
    if ((metric == TT_FINISH_MATTHEWS && layout == TT_STATS_TOPK) ||
        (metric == TT_FINISH_KAPPA && layout != TT_STATS_MULTICLASS && layout != TT_STATS_BINARY))
        return tt_fail(
            err, TT_EVALUE, "requests",
            "row %lld: metric code %g is not a value of layout %lld (a confusion matrix: "
            "Matthews' on layouts 0, 2 and 3, kappa on 0 and 2)",
            (long long)i, metric, (long long)layout);
    const double parameter = row[TT_FINISH_PARAMETER];
    if (metric == TT_FINISH_KAPPA &&
        !(parameter == TT_KAPPA_UNWEIGHTED || parameter == TT_KAPPA_LINEAR ||
          parameter == TT_KAPPA_QUADRATIC))
        return tt_fail(err, TT_EVALUE, "requests",
                       "row %lld: kappa's weights code %g is not 0 (none), 1 (linear) or 2 "
                       "(quadratic)",
                       (long long)i, parameter);
    if (!(average >= 0 && average <= TT_AVERAGE_NONE && average == floor(average)))
        return tt_fail(err, TT_EVALUE, "requests", "row %lld: average code %g is not one of 0..%d",
                       (long long)i, average, TT_AVERAGE_NONE);
    if (!(ignore == floor(ignore) && ignore >= -1 && ignore < 9.0e15))
        return tt_fail(err, TT_EVALUE, "requests",
                       "row %lld: ignore_index %g is not an integer >= -1", (long long)i, ignore);
    r->metric = (tt_finish_metric)metric;
    r->average = (tt_average)average;
    r->zero_division = row[TT_FINISH_ZERO_DIVISION];
    r->parameter = parameter;
    /* a class outside [0, C) leaves nothing out, as torchmetrics */
    r->ignore_index = ignore < (double)classes ? (int64_t)ignore : -1;
    const int64_t width =
        r->average == TT_AVERAGE_NONE && layout != TT_STATS_BINARY && !is_whole_matrix(r->metric)
            ? classes
            : 1;
    if (!(at >= 0 && at == floor(at) && at <= (double)(out_size - width)))
        return tt_fail(err, TT_EVALUE, "requests",
                       "row %lld: offset %g with %lld values does not fit out's %lld elements",
                       (long long)i, at, (long long)width, (long long)out_size);
    *offset = (int64_t)at;
    return TT_OK;
}

tt_status tt_stat_finish(const tt_view *out, const tt_view *state, const tt_view *requests,
                         int64_t layout, tt_error *err)
{
    char got[96];
    int64_t classes = 0;
    tt_status st = check_state(state, layout, &classes, err);
    if (st != TT_OK)
        return st;
    if (out->dtype != TT_F32 && out->dtype != TT_F64)
        return tt_fail(err, TT_ETYPE, "out", "expected a float32 or float64 tensor, got %s",
                       tt_describe(out, got, sizeof got));
    if ((st = tt_check_out(out, "out", out->dtype, out->ndim, out->shape, err)) != TT_OK)
        return st;
    if (requests->dtype != TT_F64 || requests->ndim != 2 || requests->shape[1] != TT_FINISH_FIELDS)
        return tt_fail(err, requests->dtype != TT_F64 ? TT_ETYPE : TT_EVALUE, "requests",
                       "expected float64 [R, %d], got %s", TT_FINISH_FIELDS,
                       tt_describe(requests, got, sizeof got));
    if ((st = tt_check_out(requests, "requests", TT_F64, 2, requests->shape, err)) != TT_OK)
        return st;
    const int64_t n_requests = requests->shape[0], out_size = numel(out);
    for (int64_t i = 0; i < n_requests; i++) { /* every request checked before any is written */
        request r;
        int64_t at;
        if ((st = read_request(requests, i, classes, layout, out_size, &r, &at, err)) != TT_OK)
            return st;
    }
    counts c = {.classes = classes, .layout = (tt_stats_layout)layout};
    /* the four counts per class, then (whole-matrix metrics) row and column sums of the matrix */
    const size_t side = layout == TT_STATS_MULTICLASS ? (size_t)classes : 2;
    c.tp = malloc(4 * (size_t)classes * sizeof *c.tp + 2 * side * sizeof(double));
    if (c.tp == NULL)
        return tt_fail(err, TT_ENOMEM, "state", "no memory for the counts of %lld classes",
                       (long long)classes);
    c.fp = c.tp + classes;
    c.tn = c.fp + classes;
    c.fn = c.tn + classes;
    double *sums = (double *)(c.fn + classes);
    load_counts(&c, (const int64_t *)state->data);
    for (int64_t i = 0; i < n_requests; i++) {
        request r;
        int64_t at;
        read_request(requests, i, classes, layout, out_size, &r, &at, err); /* checked above */
        if (is_whole_matrix(r.metric))
            put(out, at,
                whole_matrix((const int64_t *)state->data, classes, (tt_stats_layout)layout, &r,
                             sums));
        else if (layout == TT_STATS_BINARY)
            put(out, at, class_score(&c, &r, 0));
        else if (r.average == TT_AVERAGE_NONE)
            for (int64_t k = 0; k < classes; k++)
                put(out, at + k, class_score(&c, &r, k));
        else if (r.average == TT_AVERAGE_MICRO)
            put(out, at, micro_score(&c, &r));
        else
            put(out, at, averaged(&c, &r));
    }
    free(c.tp);
    return TT_OK;
}
