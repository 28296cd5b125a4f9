"""Routes of the Fleiss' kappa kernels (csrc/API_NOMINAL.md, "rating_sums" and "rating_update"):
the C core for CPU tensors, the torch reference (kernels/reference/rating_sums.py) elsewhere; a
custom op inside torch.compile."""

from torch import Tensor

from . import host_module, ops


def rating_sums(out: Tensor, ratings: Tensor) -> None:
    """out int64 [C + 3] = (ratings per category, sum of squared counts, least and largest
    number of ratings of a sample) of integer counts [N, C]."""
    if ops.compiling():
        return ops.rating_sums(out, ratings)
    host_module(out).rating_sums(out, ratings)


def rating_update(totals: Tensor, sums: Tensor, bounds: Tensor, ratings: Tensor) -> None:
    """FleissKappa's states updated in place by the batch's sums (totals int64 [C], sums int64 [2],
    bounds int64 [4]) from integer counts [N, C]; every check first, states untouched on failure."""
    if ops.compiling():
        return ops.rating_update(totals, sums, bounds, ratings)
    host_module(totals).rating_update(totals, sums, bounds, ratings)
