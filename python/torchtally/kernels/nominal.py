"""Route of the Fleiss' kappa sums kernel (csrc/API.md, "rating_sums"): the C core for CPU
tensors, the torch reference (kernels/reference/rating_sums.py) elsewhere; a custom op inside
torch.compile."""

from torch import Tensor

from . import host_module, ops


def rating_sums(out: Tensor, ratings: Tensor) -> None:
    """out int64 [C + 3] = (ratings per category, sum of squared counts, least and largest
    number of ratings of a sample) of integer counts [N, C]."""
    if ops.compiling():
        return ops.rating_sums(out, ratings)
    host_module(out).rating_sums(out, ratings)
