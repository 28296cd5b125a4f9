/*
 * error_sums.h: the float64 sums of the regression error metrics (MSE, MAE, log-cosh, MAPE,
 * SMAPE, WMAPE, MSLE, Minkowski) and the per-row values of cosine similarity and the KL and
 * Jensen-Shannon divergences, with the finiteness and domain verdict, in one read of the inputs.
 * Contract in csrc/API_REGRESSION.md ("error_sums"); kernels/reference/error_sums.py is the oracle. Nothing
 * is written on failure.
 */
#ifndef TT_ERROR_SUMS_H
#define TT_ERROR_SUMS_H

#include "core/view.h"

/* What is summed: per column of [N, D] (sums [D]), over every element (sums [1]; WMAPE [2]),
 * or per row of [N, d] (rows [N], their sum into sums [1]). */
typedef enum {
    TT_ERR_SQUARED = 0,          /* (y - x)^2 per column */
    TT_ERR_ABSOLUTE = 1,         /* |y - x| per column */
    TT_ERR_LOG_COSH = 2,         /* log cosh(y - x) per column */
    TT_ERR_ABS_PERCENT = 3,      /* |y - x| / max(|y|, 1.17e-6) */
    TT_ERR_SYM_PERCENT = 4,      /* 2 |y - x| / max(|y| + |x|, 1.17e-6) */
    TT_ERR_SQUARED_LOG = 5,      /* (log1p(x) - log1p(y))^2; x, y > -1 */
    TT_ERR_MINKOWSKI = 6,        /* |y - x|^param, param finite >= 1 */
    TT_ERR_WEIGHTED_PERCENT = 7, /* (|y - x|, |y|) */
    TT_ERR_COSINE = 8,           /* x.y / (|x| |y|) per row */
    TT_ERR_KL = 9,               /* KL(x || y) per row; param 1: log-probabilities */
    TT_ERR_JS = 10,              /* Jensen-Shannon per row; param as KL */
    TT_ERR_KINDS = 11
} tt_error_kind;

/* Adds one batch into sums (float64, contiguous, numel by kind; may be NULL) and count (int64,
 * one element: N rows, or N * D elements for kinds 3-7; may be NULL), and writes rows (float64
 * [N], contiguous; row kinds only; may be NULL). x and y: floating [N] or [N, D] (row kinds:
 * [N, d]) of one shape, any strides, float dtypes may differ. A NaN or inf input, or a value out
 * of the kind's domain, is a TT_EVALUE naming the first one, and nothing is written. */
tt_status tt_error_sums(const tt_view *sums, const tt_view *count, const tt_view *rows,
                        const tt_view *x, const tt_view *y, int64_t kind, double param,
                        tt_error *err);

#endif /* TT_ERROR_SUMS_H */
