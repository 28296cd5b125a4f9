"""Torch reference of the spectral-angle kernel (csrc/API_IMAGE.md, "spectral_angles").

out float64 [N, H, W] = per pixel of x, y [N, C, H, W] (one floating dtype, one shape, C >= 1),
the angle between the spectra along dimension 1: 2 atan2(|u - v|, |u + v|) with u = x / |x| and
v = y / |y|, in float64 (NaN where a spectrum is all zeros or not finite). All the checks run
before out is written.
"""

import torch

from . import checks as chk


def _check(out, x, y):
    chk.no_meta(("x", x), ("y", y))
    out = chk.output("out", out, torch.float64, "float64 [N, H, W]", (3,))
    x = chk.scores("x", x, out, "a floating tensor [N, C, H, W]", lambda s: len(s) == 4)
    y = chk.tensor("y", y)
    if y.dtype != x.dtype or y.shape != x.shape:
        raise ValueError(f"y: expected the dtype and shape of x ({chk.describe(x)}), got {chk.describe(y)}")
    chk.same_device("y", y, out)
    if x.shape[1] < 1:
        raise ValueError(f"x: expected at least one band (dimension 1), got {chk.describe(x)}")
    n, _, h, w = x.shape
    if tuple(out.shape) != (n, h, w):
        raise ValueError(f"out: expected float64 [{n}, {h}, {w}], got {chk.describe(out)}")
    return x, y


def spectral_angles(out, x, y, /) -> None:
    """out[i, r, c] = the angle between the spectra x[i, :, r, c] and y[i, :, r, c], float64."""
    x, y = _check(out, x, y)
    xd, yd = x.double(), y.double()
    u = xd / torch.linalg.vector_norm(xd, dim=1, keepdim=True)
    v = yd / torch.linalg.vector_norm(yd, dim=1, keepdim=True)
    # accurate near 0 and pi, where the arccosine of a rounded cosine is not
    out.copy_(2.0 * torch.atan2(torch.linalg.vector_norm(u - v, dim=1), torch.linalg.vector_norm(u + v, dim=1)))
