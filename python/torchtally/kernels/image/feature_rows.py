"""Route of the feature-rows kernel (csrc/API_IMAGE.md, "feature_rows"): an extractor's feature
rows [N, D] copied into a new flat float32 block, refused when a value is not finite in float32.
The C core for CPU tensors, the torch reference (kernels/reference/feature_rows.py) elsewhere; a
custom op inside torch.compile."""

from torch import Tensor

from .. import detached, host_module, ops


def feature_rows(out: Tensor, x: Tensor) -> None:
    """out float32 [N * D] = x [N, D] in float32, row after row; ValueError naming x (with its
    row and column) for NaN, an infinity or a value beyond float32's range, out then untouched."""
    if ops.compiling():
        return ops.feature_rows(out, detached(x))
    host_module(out).feature_rows(out, detached(x))
