/*
 * exact_curve.c: the exact curve of each column of a curve metric's cat state. The workload:
 * compute() of an exact AUROC / ROC / PR curve over an epoch's samples, e.g. 12,800 float32
 * scores x 10 classes, where torch sorts, gathers, sums and masks column by column.
 *
 * A column's counted samples become 64-bit items: the score mapped to an unsigned key whose
 * order is the scores' descending order (NaN first, as torch.sort puts it; -0.0 and 0.0 one
 * key, as they compare equal), above the sample's rank among the counted ones and its label
 * bit. An LSD radix sort (8-bit digits, stable, a digit that every key shares skipped) orders
 * them; one walk then closes a point at the last sample of each run of equal scores (NaN
 * equals nothing: each NaN its own point, as the torch path's `!=`), with the cumulative
 * counts there. The finish form adds the AUROC's trapezoids or the average precision's steps
 * during that walk, in float64, with the same divisions as functional/curves/compute.py.
 */
#include "kernels/exact_curve.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/binned_finish.h"

#define MAX_SAMPLES ((int64_t)1 << 31) /* the item holds rank * 2 + label bit in 32 bits */

/* Scratch of one column: items and their sorted copy, the scores by rank. */
typedef struct {
    uint64_t *items, *spare;
    float *values;
} scratch;

/* The descending sort key of score bits u: larger score, smaller key; NaN smallest of all. */
static inline uint32_t descending_key(float f)
{
    uint32_t u;
    if (f != f)
        return 0;
    if (f == 0.0f)
        f = 0.0f; /* -0.0 sorts with 0.0 */
    memcpy(&u, &f, sizeof u);
    const uint32_t ascending = (u & 0x80000000u) ? ~u : (u | 0x80000000u);
    return ~ascending;
}

/* Fills s with column `column`'s counted samples; returns how many, and their positives.
 * Inline, and called with constant label dtypes for the common ones (no switch per sample). */
static inline int64_t load_as(const tt_view *scores, const tt_view *labels, tt_dtype ld,
                              int64_t task, int64_t column, const scratch *s, int64_t *positives)
{
    const int64_t n = scores->shape[0];
    const char *sp = scores->data + column * tt_step(scores, 1);
    const int64_t s_step = tt_step(scores, 0);
    const char *lp = labels->data + (task == TT_EXACT_MULTILABEL ? column * tt_step(labels, 1) : 0);
    const int64_t l_step = tt_step(labels, 0);
    const int64_t wanted = task == TT_EXACT_MULTICLASS ? column : 1;
    int64_t m = 0, pos = 0;
    for (int64_t i = 0; i < n; i++) {
        const int64_t label = tt_load_label(lp + i * l_step, ld);
        if (task == TT_EXACT_MULTILABEL && label == 2)
            continue;
        const float f = *(const float *)(sp + i * s_step);
        const uint64_t positive = label == wanted;
        pos += (int64_t)positive;
        s->values[m] = f;
        s->items[m] = ((uint64_t)descending_key(f) << 32) | ((uint64_t)m << 1) | positive;
        m++;
    }
    *positives = pos;
    return m;
}

static int64_t load_column(const tt_view *scores, const tt_view *labels, int64_t task,
                           int64_t column, const scratch *s, int64_t *positives)
{
    switch (labels->dtype) {
    case TT_BOOL:
    case TT_U8: return load_as(scores, labels, TT_U8, task, column, s, positives);
    case TT_I64: return load_as(scores, labels, TT_I64, task, column, s, positives);
    default: return load_as(scores, labels, labels->dtype, task, column, s, positives);
    }
}

/* Sorts s->items[0..m) by their upper 32 bits, stably, in three passes of 11, 11 and 10 bits;
 * the result ends in s->items. */
#define DIGIT_BITS 11
#define DIGITS (1 << DIGIT_BITS)
static void radix_sort(scratch *s, int64_t m)
{
    static const int shifts[3] = {32, 32 + DIGIT_BITS, 32 + 2 * DIGIT_BITS};
    uint32_t counts[3][DIGITS];
    memset(counts, 0, sizeof counts);
    for (int64_t i = 0; i < m; i++) {
        const uint64_t x = s->items[i];
        counts[0][(x >> shifts[0]) & (DIGITS - 1)]++;
        counts[1][(x >> shifts[1]) & (DIGITS - 1)]++;
        counts[2][x >> shifts[2]]++;
    }
    for (int d = 0; d < 3; d++) {
        const int shift = shifts[d];
        uint32_t *c = counts[d];
        if (m == 0 || c[(s->items[0] >> shift) & (DIGITS - 1)] == (uint32_t)m)
            continue; /* every key has this digit: the pass would not move anything */
        uint32_t offset = 0;
        for (int b = 0; b < DIGITS; b++) {
            const uint32_t k = c[b];
            c[b] = offset;
            offset += k;
        }
        for (int64_t i = 0; i < m; i++) {
            const uint64_t x = s->items[i];
            s->spare[c[(x >> shift) & (DIGITS - 1)]++] = x;
        }
        uint64_t *t = s->items;
        s->items = s->spare;
        s->spare = t;
    }
}

/* Whether sorted items x and next hold equal scores: equal keys, NaN (key 0) excepted. */
static inline int same_score(uint64_t x, uint64_t next)
{
    return (x >> 32) == (next >> 32) && (x >> 32) != 0;
}

/* The readouts of one sorted column, in one walk over its points. */
typedef struct {
    double value;
    double positives, negatives;
    double threshold;
} readout;

/* The ROC readouts (EER, sensitivity at specificity and its mirror) read the float32 curve that
 * compute.py returns, point by point from the origin (threshold 1), as readouts.py does. */
typedef struct {
    int64_t metric;
    float level;
    int seen;        /* a point qualified (EER: any point) */
    float best, gap; /* the best value so far; EER: its gap |fpr - fnr| */
    float threshold;
} roc_readout;

static void roc_point(roc_readout *r, float fpr, float tpr, float threshold)
{
    if (r->metric == TT_EXACT_EER) {
        const float fnr = 1.0f - tpr, gap = fabsf(fpr - fnr);
        if (!r->seen || gap < r->gap) { /* the first of equal gaps */
            r->seen = 1;
            r->gap = gap;
            r->best = (fpr + fnr) / 2.0f;
        }
        return;
    }
    const int sensitivity = r->metric == TT_EXACT_SENSITIVITY_AT_SPECIFICITY;
    const float value = sensitivity ? tpr : 1.0f - fpr;
    const int qualifies = sensitivity ? 1.0f - fpr >= r->level : tpr >= r->level;
    if (qualifies && (!r->seen || value > r->best)) { /* the first of equal values */
        r->seen = 1;
        r->best = value;
        r->threshold = threshold;
    }
}

/* Recall at fixed precision reads the float32 precision-recall curve (compute.py's pr_curve,
 * without its end point): the largest recall among the points whose precision is >= level,
 * ties broken by the larger precision, then the larger threshold (readouts.py's order). */
typedef struct {
    float level;
    int seen, undefined; /* a point qualified; one that did had no recall (NaN) */
    float recall, precision, threshold;
} pr_readout;

static void pr_point(pr_readout *r, float precision, float recall, float threshold)
{
    if (!(precision >= r->level))
        return;
    if (recall != recall) {
        r->undefined = 1;
        return;
    }
    const int better =
        !r->seen || recall > r->recall ||
        (recall == r->recall &&
         (precision > r->precision || (precision == r->precision && threshold > r->threshold)));
    if (better) {
        r->seen = 1;
        r->recall = recall;
        r->precision = precision;
        r->threshold = threshold;
    }
}

static readout finish_column(const scratch *s, int64_t m, int64_t positives, int64_t metric,
                             double level, float recall_without_positives)
{
    const double pos = (double)positives, neg = (double)(m - positives);
    double tp = 0.0, fp = 0.0, area = 0.0, steps = 0.0;
    double prev_fpr = 0.0, prev_tpr = 0.0, prev_tp = 0.0; /* the ROC curve starts at the origin */
    roc_readout roc = {metric, (float)level, 0, 0.0f, 0.0f, 0.0f};
    pr_readout pr = {(float)level, 0, 0, 0.0f, 0.0f, 0.0f};
    if (metric >= TT_EXACT_EER && metric != TT_EXACT_RECALL_AT_PRECISION)
        roc_point(&roc, 0.0f, 0.0f, 1.0f);
    for (int64_t i = 0; i < m; i++) {
        const uint64_t x = s->items[i];
        const double positive = (double)(x & 1);
        tp += positive;
        fp += 1.0 - positive;
        if (i + 1 < m && same_score(x, s->items[i + 1]))
            continue; /* not the last sample of its run of equal scores */
        if (metric == TT_CURVE_AVERAGE_PRECISION) {
            steps += (tp - prev_tp) * (tp / (tp + fp));
            prev_tp = tp;
            continue;
        }
        if (metric == TT_EXACT_RECALL_AT_PRECISION) {
            const float recall = pos > 0 ? (float)(tp / pos) : recall_without_positives;
            pr_point(&pr, (float)(tp / (tp + fp)), recall, s->values[(x & 0xffffffffu) >> 1]);
            continue;
        }
        const double fpr = neg > 0 ? fp / neg : 0.0, tpr = pos > 0 ? tp / pos : 0.0;
        if (metric == TT_CURVE_AUROC) {
            area += (fpr - prev_fpr) * (tpr + prev_tpr);
            prev_fpr = fpr;
            prev_tpr = tpr;
        } else {
            roc_point(&roc, (float)fpr, (float)tpr, s->values[(x & 0xffffffffu) >> 1]);
        }
    }
    readout r = {0.0, pos, neg, NAN};
    if (metric == TT_CURVE_AUROC)
        r.value = pos > 0 && neg > 0 ? area / 2 : NAN;
    else if (metric == TT_CURVE_AVERAGE_PRECISION)
        r.value = pos > 0 ? steps / pos : 0.0;
    else if (metric == TT_EXACT_EER)
        r.value = roc.best;
    else if (metric == TT_EXACT_RECALL_AT_PRECISION) {
        const int found = pr.seen && !pr.undefined;
        r.value = found ? pr.recall : 0.0;
        r.threshold = found && pr.recall != 0.0f ? pr.threshold : NAN;
    } else if (roc.seen) {
        r.value = roc.best;
        r.threshold = roc.threshold;
    } else { /* no point qualifies */
        r.value = 0.0;
        r.threshold = 1e6;
    }
    return r;
}

/* Writes the points of one sorted column into p (rows threshold, tp, fp of stride `row`). */
static int64_t write_points(const scratch *s, int64_t m, double *p, int64_t row)
{
    double tp = 0.0, fp = 0.0;
    int64_t k = 0;
    for (int64_t i = 0; i < m; i++) {
        const uint64_t x = s->items[i];
        const float v = s->values[(x & 0xffffffffu) >> 1];
        const double positive = (double)(x & 1);
        tp += positive;
        fp += 1.0 - positive;
        if (i + 1 < m && same_score(x, s->items[i + 1]))
            continue;
        p[k] = (double)v;
        p[row + k] = tp;
        p[2 * row + k] = fp;
        k++;
    }
    return k;
}

static tt_status check_inputs(const tt_view *scores, const tt_view *labels, int64_t task,
                              tt_error *err)
{
    char got[96], got_labels[96];
    if (task < TT_EXACT_BINARY || task > TT_EXACT_MULTILABEL)
        return tt_fail(err, TT_EVALUE, "task",
                       "expected 0 (binary), 1 (multiclass) or 2 (multilabel), got %lld",
                       (long long)task);
    tt_status st = tt_check_scores(scores, "scores", 2, err);
    if (st != TT_OK)
        return st;
    if (scores->dtype != TT_F32)
        return tt_fail(err, TT_ETYPE, "scores", "expected float32 [N, K], got %s",
                       tt_describe(scores, got, sizeof got));
    if (scores->shape[0] >= MAX_SAMPLES)
        return tt_fail(err, TT_EVALUE, "scores", "expected fewer than 2^31 samples, got %lld",
                       (long long)scores->shape[0]);
    if (task == TT_EXACT_BINARY && scores->shape[1] != 1)
        return tt_fail(err, TT_EVALUE, "scores", "expected one column for a binary task, got %s",
                       tt_describe(scores, got, sizeof got));
    const int label_dims = task == TT_EXACT_MULTILABEL ? 2 : 1;
    if ((st = tt_check_labels(labels, "labels", label_dims, err)) != TT_OK)
        return st;
    if (labels->shape[0] != scores->shape[0] ||
        (label_dims == 2 && labels->shape[1] != scores->shape[1]))
        return tt_fail(err, TT_EVALUE, "labels", "expected %s rows as scores %s, got %s",
                       label_dims == 2 ? "[N, K]" : "[N]", tt_describe(scores, got, sizeof got),
                       tt_describe(labels, got_labels, sizeof got_labels));
    return TT_OK;
}

static tt_status alloc_scratch(scratch *s, int64_t n, tt_error *err)
{
    const size_t count = n > 0 ? (size_t)n : 1;
    s->items = malloc(count * sizeof *s->items);
    s->spare = malloc(count * sizeof *s->spare);
    s->values = malloc(count * sizeof *s->values);
    if (s->items && s->spare && s->values)
        return TT_OK;
    free(s->items);
    free(s->spare);
    free(s->values);
    return tt_fail(err, TT_ENOMEM, "scores", "out of memory sorting %lld scores", (long long)n);
}

static void free_scratch(scratch *s)
{
    free(s->items);
    free(s->spare);
    free(s->values);
}

/* Reverses the first m floats of row r. */
static void reverse(float *r, int64_t m)
{
    for (int64_t i = 0, j = m - 1; i < j; i++, j--) {
        const float t = r[i];
        r[i] = r[j];
        r[j] = t;
    }
}

/* Writes the float32 curve of one sorted column into c (three rows of stride `row`) as
 * compute.py's roc_rates / pr_curve form it: each rate a float64 division rounded once.
 * Returns the number of points M. */
static int64_t write_curve(const scratch *s, int64_t m, int64_t positives, int64_t kind, float *c,
                           int64_t row)
{
    const double pos = (double)positives, neg = (double)(m - positives);
    const int roc = kind == TT_EXACT_ROC;
    const float no_recall = kind == TT_EXACT_PR_NAN_RECALL ? NAN : 1.0f;
    float *x = c, *y = c + row, *t = c + 2 * row;
    double tp = 0.0, fp = 0.0;
    int64_t k = 0;
    if (roc) { /* the origin, at a threshold above every probability */
        x[0] = y[0] = 0.0f;
        t[0] = 1.0f;
        x++, y++, t++;
    }
    for (int64_t i = 0; i < m; i++) {
        const uint64_t x_i = s->items[i];
        const double positive = (double)(x_i & 1);
        tp += positive;
        fp += 1.0 - positive;
        if (i + 1 < m && same_score(x_i, s->items[i + 1]))
            continue;
        t[k] = s->values[(x_i & 0xffffffffu) >> 1];
        if (roc) {
            x[k] = neg > 0 ? (float)(fp / neg) : 0.0f;
            y[k] = pos > 0 ? (float)(tp / pos) : 0.0f;
        } else {
            x[k] = (float)(tp / (tp + fp));
            y[k] = pos > 0 ? (float)(tp / pos) : no_recall;
        }
        k++;
    }
    if (!roc) { /* thresholds ascending, then the end point (recall 0, precision 1) */
        reverse(x, k);
        reverse(y, k);
        reverse(t, k);
        x[k] = 1.0f;
        y[k] = 0.0f;
    }
    return k;
}

tt_status tt_exact_curve_rates(const tt_view *curves, const tt_view *sizes, const tt_view *scores,
                               const tt_view *labels, int64_t task, int64_t kind, tt_error *err)
{
    tt_status st = check_inputs(scores, labels, task, err);
    if (st != TT_OK)
        return st;
    if (kind < TT_EXACT_ROC || kind > TT_EXACT_PR_UNIT_RECALL)
        return tt_fail(err, TT_EVALUE, "kind",
                       "expected 0 (ROC), 1 (PR, recall NaN without positives) or 2 (PR, recall "
                       "1 without positives), got %lld",
                       (long long)kind);
    const int64_t n = scores->shape[0], columns = scores->shape[1];
    const int64_t shape[3] = {columns, 3, n + 1}, size_shape[2] = {columns, 3};
    if ((st = tt_check_out(curves, "curves", TT_F32, 3, shape, err)) != TT_OK)
        return st;
    if ((st = tt_check_out(sizes, "sizes", TT_I64, 2, size_shape, err)) != TT_OK)
        return st;
    scratch s;
    if ((st = alloc_scratch(&s, n, err)) != TT_OK)
        return st;
    for (int64_t k = 0; k < columns; k++) {
        int64_t positives;
        const int64_t m = load_column(scores, labels, task, k, &s, &positives);
        radix_sort(&s, m);
        int64_t *z = (int64_t *)sizes->data + 3 * k;
        z[0] = write_curve(&s, m, positives, kind, (float *)curves->data + k * 3 * (n + 1), n + 1);
        z[1] = positives;
        z[2] = m - positives;
    }
    free_scratch(&s);
    return TT_OK;
}

tt_status tt_exact_curve_points(const tt_view *points, const tt_view *size, const tt_view *scores,
                                const tt_view *labels, int64_t task, int64_t column, tt_error *err)
{
    tt_status st = check_inputs(scores, labels, task, err);
    if (st != TT_OK)
        return st;
    if (column < 0 || column >= scores->shape[1])
        return tt_fail(err, TT_EVALUE, "column", "expected a column in [0, %lld), got %lld",
                       (long long)scores->shape[1], (long long)column);
    const int64_t n = scores->shape[0];
    const int64_t shape[2] = {3, n}, one[1] = {1};
    if ((st = tt_check_out(points, "points", TT_F64, 2, shape, err)) != TT_OK)
        return st;
    if ((st = tt_check_out(size, "size", TT_I64, 1, one, err)) != TT_OK)
        return st;
    scratch s;
    if ((st = alloc_scratch(&s, n, err)) != TT_OK)
        return st;
    int64_t positives;
    const int64_t m = load_column(scores, labels, task, column, &s, &positives);
    radix_sort(&s, m);
    *(int64_t *)size->data = write_points(&s, m, (double *)points->data, n);
    free_scratch(&s);
    return TT_OK;
}

tt_status tt_exact_curve_finish(const tt_view *out, const tt_view *scores, const tt_view *labels,
                                int64_t task, int64_t metric, double level, tt_error *err)
{
    tt_status st = check_inputs(scores, labels, task, err);
    if (st != TT_OK)
        return st;
    if (metric < TT_CURVE_AUROC || metric > TT_EXACT_RECALL_AT_PRECISION)
        return tt_fail(err, TT_EVALUE, "metric",
                       "expected 0 (AUROC), 1 (average precision), 2 (EER), 3 (sensitivity at "
                       "specificity), 4 (specificity at sensitivity) or 5 (recall at precision), "
                       "got %lld",
                       (long long)metric);
    if (metric >= TT_EXACT_SENSITIVITY_AT_SPECIFICITY && !(level >= 0.0 && level <= 1.0))
        return tt_fail(err, TT_EVALUE, "level", "expected a rate in [0, 1], got %g", level);
    const int64_t n = scores->shape[0], columns = scores->shape[1];
    const int64_t shape[2] = {columns, 4};
    if ((st = tt_check_out(out, "out", TT_F64, 2, shape, err)) != TT_OK)
        return st;
    scratch s;
    if ((st = alloc_scratch(&s, n, err)) != TT_OK)
        return st;
    double *o = (double *)out->data;
    for (int64_t k = 0; k < columns; k++) {
        int64_t positives;
        const int64_t m = load_column(scores, labels, task, k, &s, &positives);
        radix_sort(&s, m);
        /* a column without positives: recall NaN for a class, 1 otherwise (pr_curve's rule) */
        const float no_positives = task == TT_EXACT_MULTICLASS ? NAN : 1.0f;
        const readout r = finish_column(&s, m, positives, metric, level, no_positives);
        o[4 * k] = r.value;
        o[4 * k + 1] = r.positives;
        o[4 * k + 2] = r.negatives;
        o[4 * k + 3] = r.threshold;
    }
    free_scratch(&s);
    return TT_OK;
}
