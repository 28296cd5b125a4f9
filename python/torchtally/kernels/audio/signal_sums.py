"""Route of the audio signal kernel (csrc/API_AUDIO.md, "signal_sums"): per row of preds and
target [R, T], the float64 energies every audio signal metric is a formula of. The C core for
CPU tensors, the torch reference (kernels/reference/signal_sums.py) elsewhere; a custom op
inside torch.compile."""

from torch import Tensor

from .. import detached, host_module, ops


def signal_sums(out: Tensor, preds: Tensor, target: Tensor, zero_mean: bool, group: int, eps: float) -> None:
    """out float64 [R, 3] (or [R, 4], with the projection residual) = per row (sum t'^2,
    sum t' p', sum (p' - t')^2[, sum (g t' - p')^2], g the group's gain with eps) (see the contract)."""
    if ops.compiling():
        return ops.signal_sums(out, detached(preds), detached(target), zero_mean, group, eps)
    host_module(out).signal_sums(out, detached(preds), detached(target), zero_mean, group, eps)
