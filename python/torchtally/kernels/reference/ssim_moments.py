"""Torch reference of the SSIM windowed-moments kernel (csrc/API_IMAGE.md, "ssim_moments").

out float64 [5, P, Ho, Wo] = the windowed mean of x, y, x*x, y*y and x*y over every plane of
x, y [P, H, W] (float16, bfloat16, float32 or float64), after reflect padding by pad_h rows and
pad_w columns (the edge sample is not repeated), with the separable window wh [kh] (x) ww [kw]
(float64): Ho = H + 2 pad_h - kh + 1, Wo = W + 2 pad_w - kw + 1. Everything in float64. All the
checks run before out is written.
"""

import torch
import torch.nn.functional as F

from . import checks as chk


def _check(out, x, y, wh, ww, pad_h: int, pad_w: int):
    chk.no_meta(("x", x), ("y", y), ("wh", wh), ("ww", ww))
    out = chk.output("out", out, torch.float64, "float64 [5, P, Ho, Wo]", (4,))
    x = chk.scores("x", x, out, "a floating tensor [P, H, W]", lambda s: len(s) == 3)
    y = chk.scores("y", y, out, "a floating tensor [P, H, W]", lambda s: len(s) == 3)
    if y.dtype != x.dtype or y.shape != x.shape:
        raise ValueError(f"y: expected the dtype and shape of x ({chk.describe(x)}), got {chk.describe(y)}")
    for name, w in (("wh", wh), ("ww", ww)):
        w = chk.tensor(name, w)
        if w.dtype != torch.float64 or w.dim() != 1 or w.numel() < 1:
            raise (TypeError if w.dtype != torch.float64 else ValueError)(
                f"{name}: expected float64 window weights [k] (k >= 1), got {chk.describe(w)}"
            )
        chk.same_device(name, w, out)
    p, h, w_ = x.shape
    for name, pad, size in (("pad_h", pad_h, h), ("pad_w", pad_w, w_)):
        if isinstance(pad, bool) or not isinstance(pad, int) or pad < 0 or (pad > 0 and pad >= size):
            raise ValueError(f"{name}: expected an int in [0, {max(size - 1, 0)}] (reflect padding), got {pad!r}")
    ho, wo = h + 2 * pad_h - wh.numel() + 1, w_ + 2 * pad_w - ww.numel() + 1
    if ho < 1 or wo < 1:
        raise ValueError(
            f"wh, ww: expected a window of at most {h + 2 * pad_h} x {w_ + 2 * pad_w} (the padded plane), "
            f"got {wh.numel()} x {ww.numel()}"
        )
    if tuple(out.shape) != (5, p, ho, wo):
        raise ValueError(f"out: expected float64 [5, {p}, {ho}, {wo}], got {chk.describe(out)}")
    return x, y


def ssim_moments(out, x, y, wh, ww, pad_h: int, pad_w: int, /) -> None:
    """out[0..4] = windowed means of x, y, x^2, y^2, x*y (reflect padding, separable window)."""
    x, y = _check(out, x, y, wh, ww, pad_h, pad_w)
    if x.shape[0] == 0:
        return
    xd, yd = x.double(), y.double()
    planes = torch.stack((xd, yd, xd * xd, yd * yd, xd * yd))
    if pad_h or pad_w:
        planes = F.pad(planes, (pad_w, pad_w, pad_h, pad_h), mode="reflect")
    ho, wo = out.shape[2:]
    rows = _weighted_shifts(planes, wh, ho, 2)  # the window's sum as shifted slices: no float64 conv
    out.copy_(_weighted_shifts(rows, ww, wo, 3))


def _weighted_shifts(planes, w, size: int, dim: int):
    """sum over t of w[t] * planes.narrow(dim, t, size)."""
    acc = planes.narrow(dim, 0, size) * w[0]
    for t in range(1, w.numel()):
        acc.add_(planes.narrow(dim, t, size), alpha=float(w[t]))
    return acc
