/*
 * spectral_angles.c: SpectralAngleMapper's per-pixel angle in one kernel. torch widens both
 * images to float64, takes two norms, divides, subtracts, adds, takes two more norms and an atan2:
 * about ten full-size float64 passes and as many allocations, slower than the float32 arccosine
 * torchmetrics takes. Here a block of one row's pixels is walked twice over the bands (the rows
 * are read in place through their strides and widened to double in a small buffer): the first
 * walk sums the squares of both spectra, the second the squared distance and the squared sum of
 * the unit spectra, and the angle 2 atan2(|u - v|, |u + v|) (accurate near 0 and pi, where the
 * arccosine of a cosine is not) is written out. O(N C H W) time, O(BLOCK) memory.
 */
#include "kernels/spectral_angles.h"

#include <math.h>

#include "kernels/pixel_rows.h"

#define BLOCK 256 /* pixels of one row handled together: six buffers of doubles in L1 */

static tt_status check_all(const tt_view *out, const tt_view *x, const tt_view *y, tt_error *err)
{
    char got[96], want[96];
    tt_status st = tt_check_scores(x, "x", 4, err);
    if (st != TT_OK)
        return st;
    if (y->dtype != x->dtype || y->ndim != 4 || y->shape[0] != x->shape[0] ||
        y->shape[1] != x->shape[1] || y->shape[2] != x->shape[2] || y->shape[3] != x->shape[3])
        return tt_fail(err, TT_EVALUE, "y", "expected the dtype and shape of x (%s), got %s",
                       tt_describe(x, want, sizeof want), tt_describe(y, got, sizeof got));
    st = tt_check_cpu(y, "y", err);
    if (st != TT_OK)
        return st;
    if (x->shape[1] < 1)
        return tt_fail(err, TT_EVALUE, "x", "expected at least one band (dimension 1), got %s",
                       tt_describe(x, got, sizeof got));
    const int64_t shape[3] = {x->shape[0], x->shape[2], x->shape[3]};
    return tt_check_out(out, "out", TT_F64, 3, shape, err);
}

/* The n pixels whose band-0 samples start at xr and yr (steps xs, ys; band steps xc, yc): their
 * angles into dst. */
static void angles_of_block(double *dst, const char *xr, const char *yr, int64_t xs, int64_t ys,
                            int64_t xc, int64_t yc, int64_t bands, tt_dtype dtype, int64_t n)
{
    double a[BLOCK], b[BLOCK], xx[BLOCK], yy[BLOCK], dd[BLOCK], ss[BLOCK];
    for (int64_t j = 0; j < n; j++)
        xx[j] = yy[j] = dd[j] = ss[j] = 0.0;
    for (int64_t c = 0; c < bands; c++) {
        tt_load_pixel_row(a, xr + c * xc, xs, dtype, n);
        tt_load_pixel_row(b, yr + c * yc, ys, dtype, n);
        for (int64_t j = 0; j < n; j++) {
            xx[j] += a[j] * a[j];
            yy[j] += b[j] * b[j];
        }
    }
    for (int64_t j = 0; j < n; j++) {
        xx[j] = sqrt(xx[j]);
        yy[j] = sqrt(yy[j]);
    }
    for (int64_t c = 0; c < bands; c++) {
        tt_load_pixel_row(a, xr + c * xc, xs, dtype, n);
        tt_load_pixel_row(b, yr + c * yc, ys, dtype, n);
        for (int64_t j = 0; j < n; j++) {
            const double u = a[j] / xx[j], v = b[j] / yy[j];
            dd[j] += (u - v) * (u - v);
            ss[j] += (u + v) * (u + v);
        }
    }
    for (int64_t j = 0; j < n; j++)
        dst[j] = 2.0 * atan2(sqrt(dd[j]), sqrt(ss[j]));
}

tt_status tt_spectral_angles(const tt_view *out, const tt_view *x, const tt_view *y, tt_error *err)
{
    tt_status st = check_all(out, x, y, err);
    if (st != TT_OK)
        return st;
    const int64_t images = x->shape[0], bands = x->shape[1];
    int64_t rows = x->shape[2], cols = x->shape[3];
    const int64_t xs = tt_step(x, 3), ys = tt_step(y, 3);
    /* rows that follow each other in memory in both images are walked as one long row */
    if (tt_step(x, 2) == cols * xs && tt_step(y, 2) == cols * ys) {
        cols *= rows;
        rows = rows ? 1 : 0;
    }
    double *dst = (double *)(void *)out->data;
    for (int64_t i = 0; i < images; i++)
        for (int64_t r = 0; r < rows; r++) {
            const char *xr = x->data + i * tt_step(x, 0) + r * tt_step(x, 2);
            const char *yr = y->data + i * tt_step(y, 0) + r * tt_step(y, 2);
            for (int64_t col = 0; col < cols; col += BLOCK) {
                const int64_t n = cols - col < BLOCK ? cols - col : BLOCK;
                angles_of_block(dst + (i * rows + r) * cols + col, xr + col * xs, yr + col * ys, xs,
                                ys, tt_step(x, 1), tt_step(y, 1), bands, x->dtype, n);
            }
        }
    return TT_OK;
}
