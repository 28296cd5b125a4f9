"""Torch reference of the average-ranks kernel (csrc/API_REGRESSION.md, "average_ranks").

Per column of x [N, K] (floating, no NaN), the 1-based ranks of its values, tied values given
the mean of the ranks they span (scipy.stats.rankdata's "average"), into out float64 [N, K]:
a stable sort, the start and the end of each run of equal values by a cumulative max and min,
then the mean rank scattered back to the rows. Every check runs before `out` is written.
"""

import torch
from torch import Tensor

from . import checks as chk

F64 = torch.float64


def average_ranks(out, x, /) -> None:
    chk.no_meta(("x", x))
    x = chk.tensor("x", x)
    if x.dtype not in chk.SCORE_DTYPES:
        chk.fail("x", x, "a floating tensor [N, K]", False)
    if x.dim() != 2:
        chk.fail("x", x, "a floating tensor [N, K]", True)
    expected = f"a float64 tensor [{x.shape[0]}, {x.shape[1]}]"
    out = chk.output("out", out, F64, expected, (2,))
    if out.shape != x.shape:
        chk.fail("out", out, expected, True)
    chk.same_device("x", x, out)
    nan = torch.isnan(x)
    if bool(nan.any()):
        flat = int(nan.reshape(-1).nonzero()[0, 0])
        row, col = divmod(flat, x.shape[1])
        raise ValueError(f"x: NaN at [{row}, {col}] (a NaN has no rank)")
    if x.numel():
        out.copy_(_ranks(x.to(F64)))


def _ranks(x: Tensor) -> Tensor:
    n = x.shape[0]
    sorted_x, order = torch.sort(x, dim=0, stable=True)
    starts = torch.ones_like(sorted_x, dtype=torch.bool)  # whether each position starts its run
    starts[1:] = sorted_x[1:] != sorted_x[:-1]
    ends = torch.ones_like(starts)  # whether each position ends its run
    ends[:-1] = starts[1:]
    pos = torch.arange(n, device=x.device).reshape(n, 1).expand_as(sorted_x)
    first = torch.cummax(torch.where(starts, pos, torch.zeros_like(pos)), dim=0).values
    last = torch.where(ends, pos, torch.full_like(pos, n)).flip(0).cummin(dim=0).values.flip(0)
    mean_rank = (first + last + 2).to(F64) / 2  # ranks first + 1 .. last + 1
    return torch.empty_like(mean_rank).scatter_(0, order, mean_rank)
