"""Route of the Lip Vertex Error kernel (csrc/API_MULTIMODAL.md, "lip_errors"): the C core for
CPU tensors, the torch reference (kernels/reference/lip_errors.py) elsewhere; a custom op inside
torch.compile."""

from torch import Tensor

from . import detached, host_module, ops


def lip_errors(out: Tensor, vertices_pred: Tensor, vertices_gt: Tensor, lips: Tensor) -> None:
    """out float64 0-d += the sum over the first min(T, T') frames of each frame's largest squared
    distance between the ``lips`` vertices (int64 [L] in [0, V)) of [T, V, C] and [T', V, C]."""
    pred, gt = detached(vertices_pred), detached(vertices_gt)
    if ops.compiling():
        return ops.lip_errors(out, pred, gt, lips)
    host_module(out).lip_errors(out, pred, gt, lips)
