/*
 * toeplitz_solve.c: SignalDistortionRatio's filter, the solution of R x = c with R the symmetric
 * Toeplitz autocorrelation matrix of the target (L = 512 by default). torch builds the L x L
 * matrix by indexing, copies it column-major and LU-factors it: O(L^3) work (2/3 L^3 = 90 Mflop
 * at L = 512) and O(L^2) memory per utterance, most of the metric's time. Levinson's recursion
 * (Golub and Van Loan, "Matrix Computations", the Levinson algorithm for symmetric positive
 * definite Toeplitz systems) grows the solution of the leading k x k system and the Yule-Walker
 * vector of the same system one order at a time: O(L^2) work, O(L) memory, reading r and c only.
 * The matrix is positive definite iff every prediction error beta stays > 0; a row where one
 * does not (or turns NaN) is written as NaN and left to the caller.
 */
#include "kernels/toeplitz_solve.h"

#include <math.h>
#include <stdlib.h>

static tt_status check_all(const tt_view *out, const tt_view *r, const tt_view *b, tt_error *err)
{
    char got[96], want[96];
    if (r->dtype != TT_F64 || r->ndim != 2 || r->shape[1] < 1)
        return tt_fail(err, r->dtype != TT_F64 ? TT_ETYPE : TT_EVALUE, "r",
                       "expected float64 [B, L] (L >= 1), got %s", tt_describe(r, got, sizeof got));
    tt_status st = tt_check_cpu(r, "r", err);
    if (st != TT_OK)
        return st;
    if (b->dtype != TT_F64 || b->ndim != 2 || b->shape[0] != r->shape[0] ||
        b->shape[1] != r->shape[1])
        return tt_fail(err, b->dtype != TT_F64 ? TT_ETYPE : TT_EVALUE, "b",
                       "expected the dtype and shape of r (%s), got %s",
                       tt_describe(r, want, sizeof want), tt_describe(b, got, sizeof got));
    st = tt_check_cpu(b, "b", err);
    if (st != TT_OK)
        return st;
    return tt_check_out(out, "out", TT_F64, 2, r->shape, err);
}

/* One system: t [n] (the normalised first column, t[0] = 1 implied), c [n] (the right-hand side
 * over r[0]), x [n] the solution, y [n] work space. Returns 0 where the matrix is not positive
 * definite. */
static int levinson(double *restrict x, double *restrict y, const double *restrict t,
                    const double *restrict c, int64_t n)
{
    x[0] = c[0];
    if (n == 1)
        return 1;
    double beta = 1.0, alpha = -t[1];
    y[0] = alpha;
    for (int64_t k = 1; k < n; k++) {
        beta *= (1.0 - alpha) * (1.0 + alpha);
        if (!(beta > 0.0) || !isfinite(beta))
            return 0;
        double dot = 0.0;
        for (int64_t i = 0; i < k; i++)
            dot += t[i + 1] * x[k - 1 - i];
        const double mu = (c[k] - dot) / beta;
        for (int64_t i = 0; i < k; i++)
            x[i] += mu * y[k - 1 - i];
        x[k] = mu;
        if (k + 1 == n)
            break;
        dot = 0.0;
        for (int64_t i = 0; i < k; i++)
            dot += t[i + 1] * y[k - 1 - i];
        alpha = (-t[k + 1] - dot) / beta;
        for (int64_t i = 0, j = k - 1; i <= j; i++, j--) { /* y = y + alpha * reversed(y) */
            const double yi = y[i], yj = y[j];
            y[i] = yi + alpha * yj;
            y[j] = (i == j) ? y[i] : yj + alpha * yi;
        }
        y[k] = alpha;
    }
    return isfinite(x[n - 1]);
}

tt_status tt_toeplitz_solve(const tt_view *out, const tt_view *r, const tt_view *b, tt_error *err)
{
    tt_status st = check_all(out, r, b, err);
    if (st != TT_OK)
        return st;
    const int64_t rows = r->shape[0], n = r->shape[1];
    if (rows == 0)
        return TT_OK;
    double *work = malloc(3 * (size_t)n * sizeof(double));
    if (!work)
        return tt_fail(err, TT_ENOMEM, "out", "cannot allocate %zu bytes of work space",
                       3 * (size_t)n * sizeof(double));
    double *t = work, *c = work + n, *y = work + 2 * n;
    const int64_t r0 = tt_step(r, 0), r1 = tt_step(r, 1), b0 = tt_step(b, 0), b1 = tt_step(b, 1);
    for (int64_t row = 0; row < rows; row++) {
        double *x = (double *)(void *)out->data + row * n;
        const double diag = tt_f64_at(r->data + row * r0);
        for (int64_t i = 0; i < n; i++) {
            t[i] = tt_f64_at(r->data + row * r0 + i * r1) / diag;
            c[i] = tt_f64_at(b->data + row * b0 + i * b1) / diag;
        }
        if (!(diag > 0.0) || !levinson(x, y, t, c, n))
            for (int64_t i = 0; i < n; i++)
                x[i] = NAN;
    }
    free(work);
    return TT_OK;
}
