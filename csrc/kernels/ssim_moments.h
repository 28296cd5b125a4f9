/*
 * ssim_moments.h: the five windowed moments of two image planes that SSIM is made of (the
 * image metrics' StructuralSimilarityIndexMeasure and MultiScale...). Contract in
 * csrc/API_IMAGE.md ("ssim_moments"); kernels/reference/ssim_moments.py is the oracle. out is
 * untouched on failure.
 */
#ifndef TT_SSIM_MOMENTS_H
#define TT_SSIM_MOMENTS_H

#include "core/view.h"

/* out float64 [5, P, Ho, Wo] (contiguous) = the means of x, y, x*x, y*y, x*y under the separable
 * window wh [kh] (x) ww [kw] (float64) sliding over every plane of x, y [P, H, W] (one floating
 * dtype, one shape, any strides) reflect-padded by pad_h rows and pad_w columns (0 <= pad < size,
 * the edge sample not repeated): Ho = H + 2 pad_h - kh + 1 >= 1, Wo = W + 2 pad_w - kw + 1 >= 1.
 * Products and sums in float64. */
tt_status tt_ssim_moments(const tt_view *out, const tt_view *x, const tt_view *y, const tt_view *wh,
                          const tt_view *ww, int64_t pad_h, int64_t pad_w, tt_error *err);

#endif /* TT_SSIM_MOMENTS_H */
