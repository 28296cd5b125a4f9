"""Routes of the regression kernels (csrc/API_REGRESSION.md: "error_sums", "residual_moments",
"threshold_counts"): the C core for CPU tensors, the torch references (kernels/reference/) elsewhere;
a custom op inside torch.compile. The kinds are csrc/kernels/error_sums.h's."""

from typing import Optional

from torch import Tensor

from . import host_module, ops

SQUARED, ABSOLUTE, LOG_COSH = 0, 1, 2  # per column: sums [D]
ABS_PERCENT, SYM_PERCENT, SQUARED_LOG, MINKOWSKI = 3, 4, 5, 6  # over every element: sums [1]
WEIGHTED_PERCENT = 7  # (sum |target - preds|, sum |target|)
COSINE, KL, JS = 8, 9, 10  # per row: rows [N], their sum in sums [1]


def error_sums(
    sums: Optional[Tensor],
    count: Optional[Tensor],
    rows: Optional[Tensor],
    x: Tensor,
    y: Tensor,
    kind: int,
    param: float = 0.0,
) -> None:
    """sums += the batch's float64 sums of kind over preds x and target y, count += its rows
    (its elements for the kinds summed over every element), rows = each row's value (per-row
    kinds); a NaN/inf or out-of-domain input is a ValueError and nothing is written."""
    if ops.compiling():
        return ops.error_sums(sums, count, rows, x, y, kind, param)
    host_module(x).error_sums(sums, count, rows, x, y, kind, param)


def residual_moments(state: Tensor, x: Tensor, y: Tensor) -> None:
    """Merge the moments of y - x (rows 0..D-1) and of y (rows D..2D-1) of preds x and target y
    ([N] or [N, D]) into the float64 state [2D, 6]; a NaN/inf input is a ValueError and nothing
    is written."""
    if ops.compiling():
        return ops.residual_moments(state, x, y)
    host_module(x).residual_moments(state, x, y)


def threshold_counts(counts: Tensor, x: Tensor, y: Tensor, threshold: float) -> None:
    """counts (int64 [4]) += (neither, y only, x only, both) of the elements of preds x and
    target y at or above threshold; a NaN/inf input is a ValueError and nothing is written."""
    if ops.compiling():
        return ops.threshold_counts(counts, x, y, threshold)
    host_module(x).threshold_counts(counts, x, y, threshold)
