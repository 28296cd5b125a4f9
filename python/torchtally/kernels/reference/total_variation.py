"""Torch reference of the total-variation kernel (csrc/API_IMAGE.md, "total_variation").

out float64 [N] = per image of img [N, C, H, W] (a floating dtype), the sum of the absolute
differences of vertical and horizontal neighbours, in float64 (NaN or infinity propagates). All
the checks run before out is written.
"""

import torch

from . import checks as chk


def _check(out, img):
    chk.no_meta(("img", img))
    out = chk.output("out", out, torch.float64, "float64 [N]", (1,))
    img = chk.scores("img", img, out, "a floating tensor [N, C, H, W]", lambda s: len(s) == 4)
    if out.shape[0] != img.shape[0]:
        raise ValueError(f"out: expected float64 [{img.shape[0]}], got {chk.describe(out)}")
    return img


def total_variation(out, img, /) -> None:
    """out[i] = sum of |neighbour differences| of image i, float64."""
    x = _check(out, img).double()
    down = (x[..., 1:, :] - x[..., :-1, :]).abs().sum(dim=(1, 2, 3))
    across = (x[..., :, 1:] - x[..., :, :-1]).abs().sum(dim=(1, 2, 3))
    out.copy_(down + across)
