/*
 * error_terms.h: the per-element terms of the regression error sums (one inline function per
 * kind, so each summing loop has its term inlined), and what error_sums.c and error_rows.c
 * share. Each term is the float64 expression the torch path evaluates, in the same order of
 * operations (torch.clamp's NaN propagation included), so both agree to the rounding of a sum.
 */
#ifndef TT_ERROR_TERMS_H
#define TT_ERROR_TERMS_H

#include <math.h>

#include "kernels/error_sums.h"
#include "kernels/vec_math.h"

/* |target| (and SMAPE's |target| + |preds|) is clamped to this before dividing (torchmetrics'). */
#define TT_PERCENT_EPS 1.17e-06
/* log cosh(a) = log cosh(20) + (a - 20) for a >= 20, to float64's precision. */
#define TT_LOG_COSH_BIG 20.0

/* A clamp from below that keeps a NaN (as torch.clamp). */
static inline double tt_at_least(double a, double lo) { return a < lo ? lo : a; }

static inline double tt_term_squared(double x, double y, double q)
{
    const double e = y - x;
    return (void)q, e * e;
}

static inline double tt_term_absolute(double x, double y, double q) { return (void)q, fabs(y - x); }

static inline double tt_term_target_abs(double x, double y, double q)
{
    return (void)x, (void)q, fabs(y);
}

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi" /* four-lane values stay in inlined code */

/* log1p(2 sinh(s / 2)^2) + (a - s) with s = min(a, 20), on four lanes (vec_math.h): small
 * errors keep their digits, large ones do not overflow; 2 sinh(s / 2)^2 = cosh(s) - 1 =
 * E^2 / (2 (1 + E)) with E = expm1(s). */
TT_VEC_INLINE tt_v4d tt_vec_term_log_cosh(tt_v4d x, tt_v4d y)
{
    const tt_v4d a = (tt_v4d)((tt_v4i)(y - x) & 0x7fffffffffffffffLL);
    const tt_v4d s = tt_vec_select(a > TT_LOG_COSH_BIG, tt_vec_splat(TT_LOG_COSH_BIG), a);
    const tt_v4d e = tt_vec_expm1_nonneg(s);
    return tt_vec_log1p((e * e) / (2.0 * (1.0 + e))) + (a - s);
}

static inline double tt_term_abs_percent(double x, double y, double q)
{
    return (void)q, fabs(y - x) / tt_at_least(fabs(y), TT_PERCENT_EPS);
}

/* Without SMAPE's factor 2 (applied to the sum). */
static inline double tt_term_sym_percent(double x, double y, double q)
{
    return (void)q, fabs(y - x) / tt_at_least(fabs(y) + fabs(x), TT_PERCENT_EPS);
}

/* (log1p(x) - log1p(y))^2 on four lanes, as log1p((x - y) / (1 + y))^2: one log instead of
 * two, and no cancellation where x is near y (x - y is exact there, 1 + y for float32 inputs).
 * NaN outside the domain x, y > -1, where the quotient alone could still be finite. */
TT_VEC_INLINE tt_v4d tt_vec_term_squared_log(tt_v4d x, tt_v4d y)
{
    const tt_v4d e = tt_vec_log1p((x - y) / (1.0 + y));
    return tt_vec_select((x > -1.0) & (y > -1.0), e * e, tt_vec_splat(__builtin_nan("")));
}

#pragma GCC diagnostic pop

/* |y - x|^q through libm's pow (p = 1, 2, 3 take the terms below, as torch's pow does). */
static inline double tt_term_minkowski(double x, double y, double q) { return pow(fabs(y - x), q); }

/* |y - x|^3 multiplied out (Minkowski's p = 3, as torch's pow computes it). */
static inline double tt_term_cube(double x, double y, double q)
{
    const double a = fabs(y - x);
    return (void)q, a * a * a;
}

/* torch.xlogy: NaN for a NaN b, 0 for a = 0, else a log(b). */
static inline double tt_xlogy(double a, double b)
{
    if (b != b)
        return b;
    return a == 0.0 ? 0.0 : a * log(b);
}

/* The per-row kinds (error_rows.c): each row's value into values[N] (when not NULL) and their
 * sum into acc[0]. Returns the batch's verdict summary: the sum of the rows' norm products
 * (cosine) or of the rows (divergences; NaN when a probability is negative), NaN or inf when
 * the inputs must be searched. */
double tt_error_rows(const tt_view *x, const tt_view *y, int64_t kind, int log_prob, double *values,
                     double *acc);

/* The first bad element of a refused batch: a NaN or inf in x, then y; then the kind's domain
 * (MSLE: <= -1; divergences of probabilities: < 0, then a row summing to 0). A TT_EVALUE naming
 * it, or TT_OK when there is none (a sum that overflowed on valid inputs). */
tt_status tt_error_search(const tt_view *x, const tt_view *y, int64_t kind, double param,
                          tt_error *err);

#endif /* TT_ERROR_TERMS_H */
