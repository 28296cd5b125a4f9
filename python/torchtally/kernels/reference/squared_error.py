"""Torch reference of the squared-error kernel (csrc/API_IMAGE.md, "squared_error").

out float64 [3] = (sum of (x' - y')^2, min y', max y') over x, y [N] (float16, bfloat16,
float32 or float64, one dtype), where x', y' are x, y in float64, clamped to bounds (float64
[2]: lo, hi) when bounds is given. NaN propagates; N = 0 gives (0, +inf, -inf). All the checks
run before out is written.
"""

import torch

from . import checks as chk


def _check(out, x, y, bounds):
    chk.no_meta(("x", x), ("y", y), ("bounds", bounds))
    out = chk.output("out", out, torch.float64, "float64 [3]", (1,))
    if out.numel() != 3:
        raise ValueError(f"out: expected float64 [3], got {chk.describe(out)}")
    x = chk.scores("x", x, out, "a floating tensor [N]", lambda s: len(s) == 1)
    y = chk.tensor("y", y)
    if y.dtype != x.dtype or y.shape != x.shape:
        raise ValueError(f"y: expected the dtype and shape of x ({chk.describe(x)}), got {chk.describe(y)}")
    chk.same_device("y", y, out)
    if bounds is not None:
        bounds = chk.tensor("bounds", bounds)
        if bounds.dtype != torch.float64 or bounds.shape != (2,):
            raise (TypeError if bounds.dtype != torch.float64 else ValueError)(
                f"bounds: expected float64 [2] (lo, hi), got {chk.describe(bounds)}"
            )
        chk.same_device("bounds", bounds, out)
        if not bounds[0] <= bounds[1]:
            raise ValueError(f"bounds: expected lo <= hi, got {tuple(bounds.tolist())}")
    return x, y, bounds


def squared_error(out, x, y, bounds, /) -> None:
    """out = (sum (x - y)^2, min y, max y) in float64, x and y clamped to bounds first."""
    x, y, bounds = _check(out, x, y, bounds)
    xd, yd = x.double(), y.double()
    if bounds is not None:
        xd, yd = xd.clamp(bounds[0], bounds[1]), yd.clamp(bounds[0], bounds[1])
    if yd.numel() == 0:
        least, most = torch.tensor(float("inf")), torch.tensor(float("-inf"))
    else:
        least, most = yd.min(), yd.max()
    out.copy_(torch.stack(((xd - yd).square().sum(), least.to(out), most.to(out))))
