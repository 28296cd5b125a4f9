"""Route of the Toeplitz-solve kernel (csrc/API_AUDIO.md, "toeplitz_solve"): per row, the solution
of a symmetric positive definite Toeplitz system given by its first column, as
SignalDistortionRatio's distortion filter needs. The C core for CPU tensors, the torch reference
(kernels/reference/toeplitz_solve.py) elsewhere; a custom op inside torch.compile."""

from torch import Tensor

from .. import host_module, ops


def toeplitz_solve(out: Tensor, r: Tensor, b: Tensor) -> None:
    """out float64 [B, L] = toeplitz(r[i])^-1 b[i] per row (NaN rows: not positive definite)."""
    if ops.compiling():
        return ops.toeplitz_solve(out, r, b)
    host_module(out).toeplitz_solve(out, r, b)
