"""Torch reference of the Kendall counts kernel (csrc/API_REGRESSION.md, "kendall_counts").

Per output of pairs [N, 2, D] (row 0 preds x, row 1 target y), Knight's method: the pairs
sorted by (x, y); the discordant pairs are the inversions of the y sequence in that order,
counted bit level by bit level of y's dense rank (a stable partition per level, log2(distinct
values) passes of O(N) each); concordant pairs follow from the tie counts (pairs tied in x, in
y, in both). out float64 [D, 11] = (C - D, C, D, distinct x, distinct y, Tx, Tx1, Tx2, Ty, Ty1,
Ty2), T = sum t(t-1)/2, T1 = sum t(t-1)(t-2), T2 = sum t(t-1)(2t+5) over runs of t ties. Every
check runs before `out` is written.
"""

from typing import List, Optional, Tuple

import torch
from torch import Tensor

from . import checks as chk

_F64 = torch.float64


def kendall_counts(out, pairs, /) -> None:
    chk.no_meta(("pairs", pairs))
    pairs = chk.tensor("pairs", pairs)
    if pairs.dtype not in (torch.float32, torch.float64):
        chk.fail("pairs", pairs, "a float32 or float64 tensor [N, 2, D]", False)
    if pairs.dim() != 3 or pairs.shape[1] != 2:
        chk.fail("pairs", pairs, "a tensor [N, 2, D]", True)
    expected = f"a float64 tensor [{pairs.shape[2]}, 11]"
    out = chk.output("out", out, _F64, expected, (2,))
    if tuple(out.shape) != (pairs.shape[2], 11):
        chk.fail("out", out, expected, True)
    chk.same_device("pairs", pairs, out)
    nan = torch.isnan(pairs)
    if bool(nan.any()):
        i, r, d = (int(v) for v in nan.nonzero()[0])
        raise ValueError(f"pairs: NaN at [{i}, {r}, {d}]")
    rows = [_column(pairs[:, 0, d], pairs[:, 1, d]) for d in range(pairs.shape[2])]
    if rows:
        out.copy_(torch.tensor(rows, dtype=_F64, device=out.device))


def _column(x: Tensor, y: Tensor) -> List[float]:
    n = x.shape[0]
    if n == 0:
        return [0.0] * 11
    by_y = torch.sort(y, stable=True).indices
    order = by_y[torch.sort(x[by_y], stable=True).indices]  # sorted by (x, y)
    xs, ys = x[order], y[order]
    runs_x = _run_lengths(xs)
    runs_xy = _run_lengths(xs, ys)
    runs_y = _run_lengths(torch.sort(ys).values)
    dense_y, distinct_y = dense_ranks(ys)
    discordant = count_inversions(dense_y, distinct_y)
    tied_x, tied_y, tied_xy = (int((r * (r - 1)).sum()) // 2 for r in (runs_x, runs_y, runs_xy))
    concordant = n * (n - 1) // 2 - tied_x - tied_y + tied_xy - discordant
    return [
        concordant - discordant,
        concordant,
        discordant,
        runs_x.numel(),
        distinct_y,
        tied_x,
        *_tie_moments(runs_x),
        tied_y,
        *_tie_moments(runs_y),
    ]


def _run_lengths(sorted_x: Tensor, also: Optional[Tensor] = None) -> Tensor:
    """Lengths (int64) of the runs of equal values of a sorted 1-D tensor (runs of equal pairs
    when ``also``, sorted along with it, is given)."""
    n = sorted_x.shape[0]
    starts = torch.ones(n, dtype=torch.bool, device=sorted_x.device)
    starts[1:] = sorted_x[1:] != sorted_x[:-1]
    if also is not None:
        starts[1:] |= also[1:] != also[:-1]
    first = starts.nonzero().reshape(-1)
    return torch.diff(first, append=torch.tensor([n], device=first.device))


def dense_ranks(x: Tensor) -> Tuple[Tensor, int]:
    """0-based dense ranks (int64) of a 1-D tensor and the number of distinct values."""
    sorted_x, order = torch.sort(x, stable=True)
    starts = torch.ones(x.shape[0], dtype=torch.int64, device=x.device)
    starts[1:] = (sorted_x[1:] != sorted_x[:-1]).to(torch.int64)
    dense = torch.cumsum(starts, 0) - 1
    distinct = int(dense[-1]) + 1 if x.shape[0] else 0
    return torch.empty_like(dense).scatter_(0, order, dense), distinct


def count_inversions(ranks: Tensor, distinct: int) -> int:
    """Pairs i < j with ranks[i] > ranks[j] of 0-based dense ranks (int64 [N], values below
    ``distinct``), in O(N log distinct): at bit level b (highest first) the elements are grouped
    by their rank's bits above b, each group in its original order; an element with bit b = 0
    is inverted with every earlier element of its group whose bit b is 1. A stable partition
    (zeros, then ones) of each group gives the grouping of the next level."""
    n = ranks.shape[0]
    if n < 2 or distinct < 2:
        return 0
    pos = torch.arange(n, device=ranks.device)
    order = pos.clone()
    total = torch.zeros((), dtype=torch.int64, device=ranks.device)
    for b in reversed(range((distinct - 1).bit_length())):
        cur = ranks[order]
        bit = (cur >> b) & 1
        group = cur >> (b + 1)
        starts = torch.ones(n, dtype=torch.bool, device=ranks.device)
        starts[1:] = group[1:] != group[:-1]
        first = torch.cummax(torch.where(starts, pos, torch.zeros_like(pos)), dim=0).values
        ones_before = torch.cumsum(bit, 0) - bit
        ones_before = ones_before - ones_before[first]  # earlier ones of the same group
        total += (ones_before * (1 - bit)).sum()
        group_index = torch.cumsum(starts.to(torch.int64), 0) - 1
        zeros_in_group = torch.zeros(n, dtype=torch.int64, device=ranks.device).scatter_add_(0, group_index, 1 - bit)
        zeros_before = (pos - first) - ones_before
        new_pos = first + torch.where(bit == 0, zeros_before, zeros_in_group[group_index] + ones_before)
        order = torch.empty_like(order).scatter_(0, new_pos, order)
    return int(total)


def _tie_moments(runs: Tensor) -> Tuple[float, float]:
    r = runs.to(_F64)
    return float((r * (r - 1) * (r - 2)).sum()), float((r * (r - 1) * (2 * r + 5)).sum())
