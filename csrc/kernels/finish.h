/*
 * finish.h: the values of the confusion-matrix family from its count state, every requested
 * metric of one state in one call (accuracy, precision, recall, F-beta, specificity, Hamming
 * distance, Jaccard index, negative predictive value, each under micro / macro / weighted / none; Matthews' correlation
 * and Cohen's kappa of the whole matrix). Contract in
 * csrc/API.md; the torch functions of torchtally.functional.classification.compute are the
 * oracle. `out` is untouched on failure.
 */
#ifndef TT_FINISH_H
#define TT_FINISH_H

#include "core/view.h"

/* How the counts are laid out in `state` (int64, contiguous):
 *   MULTICLASS  [C, C] confusion matrix (row = target, column = prediction)
 *   TOPK        [C, 3] (predicted, hits, support) per class, for top_k > 1
 *   BINARY      [2, 2] or [1, 2, 2]: one class, a single value per request
 *   MULTILABEL  [L, 2, 2] (label, target, prediction) */
typedef enum {
    TT_STATS_MULTICLASS = 0,
    TT_STATS_TOPK = 1,
    TT_STATS_BINARY = 2,
    TT_STATS_MULTILABEL = 3,
} tt_stats_layout;

typedef enum {
    TT_FINISH_ACCURACY = 0,
    TT_FINISH_PRECISION = 1,
    TT_FINISH_RECALL = 2,
    TT_FINISH_FBETA = 3,
    TT_FINISH_SPECIFICITY = 4,
    TT_FINISH_HAMMING = 5,
    TT_FINISH_JACCARD = 6,
    TT_FINISH_MATTHEWS = 7, /* of the whole matrix (multilabel: pooled over labels); no average */
    TT_FINISH_KAPPA = 8,    /* Cohen's kappa of the whole matrix (multiclass, binary); no average */
    TT_FINISH_NPV = 9,      /* negative predictive value, tn / (tn + fn): per class, averaged */
} tt_finish_metric;

/* Cohen's kappa's disagreement weights (the request's parameter field). */
typedef enum {
    TT_KAPPA_UNWEIGHTED = 0, /* 1 off the diagonal */
    TT_KAPPA_LINEAR = 1,     /* |i - j| */
    TT_KAPPA_QUADRATIC = 2,  /* (i - j)^2 */
} tt_kappa_weights;

typedef enum {
    TT_AVERAGE_MICRO = 0,
    TT_AVERAGE_MACRO = 1,
    TT_AVERAGE_WEIGHTED = 2,
    TT_AVERAGE_NONE = 3,
} tt_average;

/* A request is one row of `requests`, float64 [R, TT_FINISH_FIELDS]. */
enum {
    TT_FINISH_METRIC = 0,        /* tt_finish_metric */
    TT_FINISH_AVERAGE = 1,       /* tt_average */
    TT_FINISH_ZERO_DIVISION = 2, /* the value of a ratio whose denominator is 0 */
    TT_FINISH_PARAMETER = 3,     /* F-beta's beta; kappa's tt_kappa_weights (others: unused) */
    TT_FINISH_IGNORE_INDEX = 4,  /* Jaccard, multiclass: the class left out (-1: none) */
    TT_FINISH_OFFSET = 5,        /* where in `out` the request's values start */
    TT_FINISH_FIELDS = 6,
};

/* out float32 or float64, contiguous, any shape (read as flat): each request writes C values
 * (average none, not binary) or one value from its offset on, rounded once from float64. */
tt_status tt_stat_finish(const tt_view *out, const tt_view *state, const tt_view *requests,
                         int64_t layout, tt_error *err);

#endif /* TT_FINISH_H */
