"""Route of the squared-error kernel (csrc/API_IMAGE.md, "squared_error"): the float64 sum of
squared differences of two flat tensors and the range of the second, as PeakSignalNoiseRatio
keeps them. The C core for CPU tensors, the torch reference (kernels/reference/squared_error.py)
elsewhere; a custom op inside torch.compile."""

from typing import Optional

from torch import Tensor

from .. import detached, host_module, ops


def squared_error(out: Tensor, x: Tensor, y: Tensor, bounds: Optional[Tensor]) -> None:
    """out float64 [3] = (sum (x - y)^2, min y, max y), x and y [N] clamped to bounds first."""
    if ops.compiling():
        return ops.squared_error(out, detached(x), detached(y), bounds)
    host_module(out).squared_error(out, detached(x), detached(y), bounds)
