/*
 * total_variation.h: the total variation of every image of a floating batch (the image metrics'
 * TotalVariation). Contract in csrc/API_IMAGE.md ("total_variation");
 * kernels/reference/total_variation.py is the oracle. out is untouched on failure.
 */
#ifndef TT_TOTAL_VARIATION_H
#define TT_TOTAL_VARIATION_H

#include "core/view.h"

/* out float64 [N] (contiguous) = per image of img [N, C, H, W] (a floating dtype, any strides),
 * the sum of |img[c, i + 1, j] - img[c, i, j]| and |img[c, i, j + 1] - img[c, i, j]| over every
 * pair of vertical and horizontal neighbours, in float64. NaN or infinity propagates. */
tt_status tt_total_variation(const tt_view *out, const tt_view *img, tt_error *err);

#endif /* TT_TOTAL_VARIATION_H */
