"""Route of the total-variation kernel (csrc/API_IMAGE.md, "total_variation"): per image of a
floating batch [N, C, H, W], the float64 sum of absolute neighbour differences, as TotalVariation
keeps it. The C core for CPU tensors, the torch reference (kernels/reference/total_variation.py)
elsewhere; a custom op inside torch.compile."""

from torch import Tensor

from .. import detached, host_module, ops


def total_variation(out: Tensor, img: Tensor) -> None:
    """out float64 [N] = per image, the sum of |vertical| and |horizontal| neighbour differences."""
    if ops.compiling():
        return ops.total_variation(out, detached(img))
    host_module(out).total_variation(out, detached(img))
