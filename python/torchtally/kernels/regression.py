"""Routes of the regression kernels (csrc/API_REGRESSION.md): the C core for CPU tensors, the torch
references (kernels/reference/: error_sums.py, residual_moments.py, threshold_counts.py,
average_ranks.py, kendall_counts.py, rank_pairs.py, crps_scores.py) elsewhere. Each
kernel is a custom op inside torch.compile (error_sums' kinds are csrc/kernels/error_sums.h's),
though average_ranks and kendall_counts run at compute, rank_pairs in an update that runs eagerly
(RankPairs.traceable_update is False) and crps_scores in CPU updates only."""

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


def average_ranks(out: Tensor, x: Tensor) -> None:
    """out float64 [N, K] = per column of x (floating [N, K], no NaN) the 1-based ranks of its
    values, ties given the mean of the ranks they span (scipy.stats.rankdata's "average")."""
    if ops.compiling():
        return ops.average_ranks(out, x)
    host_module(out).average_ranks(out, x)


def rank_pairs(out: Tensor, preds: Tensor, target: Tensor) -> None:
    """out float32 or float64 [N, 2, D] = per sample the rows (preds, target) ([N] or [N, D], one
    shape, floating or integer) in out's dtype; a value not finite in that dtype is a ValueError
    naming preds (first) or target, and nothing is written."""
    if ops.compiling():
        return ops.rank_pairs(out, preds, target)
    host_module(out).rank_pairs(out, preds, target)


def kendall_counts(out: Tensor, pairs: Tensor) -> None:
    """out float64 [D, 11] = per output of pairs (float32 or float64 [N, 2, D], no NaN) Kendall's
    (C - D, C, D, distinct preds, distinct target, Tx, Tx1, Tx2, Ty, Ty1, Ty2): concordant and
    discordant pairs, and over runs of t ties sum t(t-1)/2, t(t-1)(t-2), t(t-1)(2t+5)."""
    if ops.compiling():
        return ops.kendall_counts(out, pairs)
    host_module(out).kendall_counts(out, pairs)


def crps_scores(out: Tensor, preds: Tensor, target: Tensor) -> None:
    """out float64 [N] = the CRPS of each sample of the ensemble forecast preds ([N, M], M >= 2)
    for target [N]; a NaN or inf input is a ValueError naming preds or target."""
    if ops.compiling():
        return ops.crps_scores(out, preds, target)
    host_module(out).crps_scores(out, preds, target)
