/*
 * spectral_angles.h: the spectral angle of every pixel of two multi-band images (the image
 * metrics' SpectralAngleMapper). Contract in csrc/API_IMAGE.md ("spectral_angles");
 * kernels/reference/spectral_angles.py is the oracle. out is untouched on failure.
 */
#ifndef TT_SPECTRAL_ANGLES_H
#define TT_SPECTRAL_ANGLES_H

#include "core/view.h"

/* out float64 [N, H, W] (contiguous) = per pixel, the angle 2 atan2(|u - v|, |u + v|) between the
 * unit spectra u = x / |x| and v = y / |y| taken along dimension 1 of x, y [N, C, H, W] (one
 * floating dtype, one shape, any strides, C >= 1). All arithmetic in float64; a pixel whose
 * spectrum is all zeros (or holds NaN or infinity) gets NaN. */
tt_status tt_spectral_angles(const tt_view *out, const tt_view *x, const tt_view *y, tt_error *err);

#endif /* TT_SPECTRAL_ANGLES_H */
