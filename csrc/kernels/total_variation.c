/*
 * total_variation.c: TotalVariation's per-image sum of absolute neighbour differences in one pass.
 * torch widens the batch to float64 and makes two shifted differences, their absolute values and
 * two sums: six full-size passes and four allocations, slower than the float32 arithmetic
 * torchmetrics does. Here every row is read once through its strides, widened to double into one
 * of two row buffers, and both its horizontal differences and its vertical differences against
 * the previous row are summed in float64 in four lanes the compiler vectorises. O(N C H W) time,
 * O(W) memory.
 */
#include "kernels/total_variation.h"

#include <math.h>
#include <stdlib.h>

#include "kernels/pixel_rows.h"

#define LANES 4

static tt_status check_all(const tt_view *out, const tt_view *img, tt_error *err)
{
    tt_status st = tt_check_scores(img, "img", 4, err);
    if (st != TT_OK)
        return st;
    const int64_t shape[1] = {img->shape[0]};
    return tt_check_out(out, "out", TT_F64, 1, shape, err);
}

/* sum over j of |a[j + 1] - a[j]| (n samples), and, when b is given, of |a[j] - b[j]|. */
static double row_variation(const double *restrict a, const double *restrict b, int64_t n)
{
    double lane[LANES] = {0.0, 0.0, 0.0, 0.0};
    int64_t j = 0;
    for (; j + LANES < n; j += LANES)
        for (int l = 0; l < LANES; l++)
            lane[l] += fabs(a[j + l + 1] - a[j + l]);
    for (; j + 1 < n; j++)
        lane[0] += fabs(a[j + 1] - a[j]);
    if (b) {
        j = 0;
        for (; j + LANES <= n; j += LANES)
            for (int l = 0; l < LANES; l++)
                lane[l] += fabs(a[j + l] - b[j + l]);
        for (; j < n; j++)
            lane[0] += fabs(a[j] - b[j]);
    }
    return (lane[0] + lane[1]) + (lane[2] + lane[3]);
}

tt_status tt_total_variation(const tt_view *out, const tt_view *img, tt_error *err)
{
    tt_status st = check_all(out, img, err);
    if (st != TT_OK)
        return st;
    const int64_t images = img->shape[0], channels = img->shape[1], h = img->shape[2],
                  w = img->shape[3];
    double *dst = (double *)(void *)out->data;
    if (w == 0 || h == 0 || channels == 0) {
        for (int64_t i = 0; i < images; i++)
            dst[i] = 0.0;
        return TT_OK;
    }
    double *rows = malloc(2 * (size_t)w * sizeof(double));
    if (!rows)
        return tt_fail(err, TT_ENOMEM, "img", "cannot allocate %zu bytes of work space",
                       2 * (size_t)w * sizeof(double));
    const int64_t s0 = tt_step(img, 0), s1 = tt_step(img, 1), s2 = tt_step(img, 2),
                  s3 = tt_step(img, 3);
    for (int64_t i = 0; i < images; i++) {
        double total = 0.0;
        for (int64_t c = 0; c < channels; c++) {
            const char *plane = img->data + i * s0 + c * s1;
            for (int64_t r = 0; r < h; r++) {
                double *cur = rows + (r % 2) * w, *prev = rows + ((r + 1) % 2) * w;
                tt_load_pixel_row(cur, plane + r * s2, s3, img->dtype, w);
                total += row_variation(cur, r ? prev : NULL, w);
            }
        }
        dst[i] = total;
    }
    free(rows);
    return TT_OK;
}
