/*
 * class_argmax.h: per pixel, the class of the largest score of a stack of score maps: how the
 * segmentation overlap metrics read float one-hot inputs. Contract in csrc/API.md ("Class
 * argmax"); kernels/reference/class_argmax.py is the oracle.
 */
#ifndef TT_CLASS_ARGMAX_H
#define TT_CLASS_ARGMAX_H

#include "core/view.h"

/* out int64 [N, P], C-contiguous, = the first c of the largest scores[n, c, p] (as torch.argmax;
 * 0 when every score is -inf), or -1 where one of the C scores of the pixel is NaN. scores:
 * float16, bfloat16, float32 or float64 [N, C, P], C >= 1, any strides. Every check runs
 * before `out` is written. */
tt_status tt_class_argmax(const tt_view *out, const tt_view *scores, tt_error *err);

#endif /* TT_CLASS_ARGMAX_H */
