/*
 * pixel_rows.h: one image row (any float dtype, any stride) read as doubles into a buffer, for the
 * kernels that walk images row by row (spectral_angles, total_variation). Inline: a row of a
 * small image is short, and a call through the PLT would cost as much as the loop.
 */
#ifndef TT_PIXEL_ROWS_H
#define TT_PIXEL_ROWS_H

#include "core/view.h"

/* dst[j] = the sample at src + j * step (a float dtype), as double, for j in [0, n). */
static inline void tt_load_pixel_row(double *dst, const char *src, int64_t step, tt_dtype dtype,
                                     int64_t n)
{
    if (dtype == TT_F32 && step == (int64_t)sizeof(float)) {
        const float *s = (const float *)(const void *)src;
        for (int64_t j = 0; j < n; j++)
            dst[j] = (double)s[j];
    } else if (dtype == TT_F64 && step == (int64_t)sizeof(double)) {
        memcpy(dst, src, (size_t)n * sizeof(double));
    } else {
        for (int64_t j = 0; j < n; j++)
            dst[j] = tt_load_score(src + j * step, dtype);
    }
}

#endif /* TT_PIXEL_ROWS_H */
