"""Route of the SSIM windowed-moments kernel (csrc/API_IMAGE.md, "ssim_moments"): the five
windowed means of x, y, x^2, y^2 and x*y over reflect-padded planes, in float64. The C core for
CPU tensors, the torch reference (kernels/reference/ssim_moments.py) elsewhere; a custom op
inside torch.compile."""

from torch import Tensor

from .. import detached, host_module, ops


def ssim_moments(out: Tensor, x: Tensor, y: Tensor, wh: Tensor, ww: Tensor, pad_h: int, pad_w: int) -> None:
    """out float64 [5, P, Ho, Wo] = windowed means of x, y, x^2, y^2, x*y (x, y [P, H, W])."""
    if ops.compiling():
        return ops.ssim_moments(out, detached(x), detached(y), wh, ww, pad_h, pad_w)
    host_module(out).ssim_moments(out, detached(x), detached(y), wh, ww, pad_h, pad_w)
