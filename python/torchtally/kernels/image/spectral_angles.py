"""Route of the spectral-angle kernel (csrc/API_IMAGE.md, "spectral_angles"): the angle between
the spectra of every pixel of two images [N, C, H, W], in float64, as SpectralAngleMapper keeps
them. The C core for CPU tensors, the torch reference (kernels/reference/spectral_angles.py)
elsewhere; a custom op inside torch.compile."""

from torch import Tensor

from .. import detached, host_module, ops


def spectral_angles(out: Tensor, x: Tensor, y: Tensor) -> None:
    """out float64 [N, H, W] = per pixel, the angle between x[:, :, h, w] and y[:, :, h, w]."""
    if ops.compiling():
        return ops.spectral_angles(out, detached(x), detached(y))
    host_module(out).spectral_angles(out, detached(x), detached(y))
