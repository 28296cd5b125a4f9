"""Rank correlations (Spearman's rho, Kendall's tau): option checks, the stored (preds, target)
pairs, and the results from every sample.

A rank correlation needs every sample: the classes keep the (preds, target) pairs of every
batch in one "cat" state of rows [2, D] (row 0 preds, row 1 target), and rank them at compute
(C kernels: csrc/kernels/average_ranks.c, kendall_counts.c; their torch references elsewhere),
O(N log N) time and O(N) memory per output, never a matrix of pairs.

* ranks: average ranks for ties (scipy.stats.rankdata's "average"), so Spearman's rho is
  Pearson's correlation of the ranks, as scipy.stats.spearmanr;
* Kendall's tau by Knight's method: sort the pairs by (preds, target); the discordant pairs are
  the inversions of the target sequence (counted by a merge sort in C; by the target's dense
  rank, bit level by bit level, in the torch reference); concordant
  pairs follow from the tie counts (pairs tied in preds, in target, in both). Variants "a"
  ((C - D) / (C + D), as torchmetrics), "b" and "c" (scipy.stats.kendalltau's), and the
  asymptotic test (a normal approximation with the tie-corrected variance, as torchmetrics and
  scipy's ``method="asymptotic"``).

Counts are int64 (exact); statistics are float64.
"""

import warnings
from typing import Optional, Tuple, Union

import torch
from torch import Tensor

from ...errors import stacklevel_outside_torchtally
from ...kernels import regression as kernel
from . import update

_F64 = torch.float64
VARIANTS = ("a", "b", "c")
ALTERNATIVES = ("two-sided", "less", "greater")


# -- options -------------------------------------------------------------------------------------


def check_variant(variant: object) -> str:
    if not isinstance(variant, str) or variant.lower() not in VARIANTS:
        raise ValueError(f"variant: expected one of {VARIANTS}, got {variant!r} (Invalid variant)")
    return variant.lower()


def check_t_test(t_test: object, alternative: object) -> Optional[str]:
    """The alternative hypothesis of the test, or None without a test (``alternative`` is then
    not read, as torchmetrics)."""
    if not isinstance(t_test, bool):
        raise ValueError(f"t_test: expected a bool, got {type(t_test).__name__} {t_test!r}")
    if not t_test:
        return None
    if alternative is None:
        raise ValueError("alternative: required with t_test=True, got None")
    if alternative not in ALTERNATIVES:
        raise ValueError(f"alternative: expected one of {ALTERNATIVES}, got {alternative!r} (Invalid alternative)")
    return str(alternative)


# -- the stored pairs ----------------------------------------------------------------------------


def pair_rows(
    preds: object, target: object, num_outputs: int, store: torch.dtype, device: Optional[torch.device] = None
) -> Tuple[Tensor, bool]:
    """A checked batch as rows [N, 2, D] of dtype ``store`` (row 0 preds, row 1 target), and
    whether storing it rounded a value (float64 or wide integer inputs kept as float32).

    Shapes as Pearson's ([N] or [N, D], D = num_outputs); NaN or inf is a ValueError, and so is
    a finite value too large for ``store`` (it would be stored as inf)."""
    p, t = update.pearson_shaped(preds, target, num_outputs, device)
    rows = torch.empty(p.shape[0], 2, num_outputs, dtype=store, device=p.device)
    try:
        kernel.rank_pairs(rows, p, t)  # the finite check, then the rows
    except ValueError:
        _explain_non_finite(p, t, num_outputs, store)
        raise
    rounded = False
    if _wider(p.dtype, store) or _wider(t.dtype, store):
        p, t = p.reshape(-1, num_outputs).to(_F64), t.reshape(-1, num_outputs).to(_F64)
        rounded = bool((rows[:, 0].to(_F64) != p).any()) or bool((rows[:, 1].to(_F64) != t).any())
    return rows, rounded


def _explain_non_finite(p: Tensor, t: Tensor, num_outputs: int, store: torch.dtype) -> None:
    """The ValueError for a batch with a value not finite in ``store``: a NaN or inf input (preds
    first), else a finite value too large for ``store``."""
    update.finite("preds", p)
    update.finite("target", t)
    for name, src in (("preds", p), ("target", t)):
        bad = ~torch.isfinite(src.to(store))
        if bool(bad.any()):
            flat = int(bad.reshape(-1).nonzero()[0, 0])
            raise ValueError(
                f"{name}: the value {float(src.reshape(-1)[flat])} at flat index {flat} does not fit the {store} "
                "state; make the metric while torch's default dtype is float64 to keep float64 pairs"
            )


def _wider(dtype: torch.dtype, store: torch.dtype) -> bool:
    """Whether some value of ``dtype`` has no exact ``store`` (float32 or float64) twin."""
    if store == _F64:
        return dtype == torch.int64
    return dtype in (torch.float64, torch.int32, torch.int64)


def rounding_warning(metric: str) -> None:
    warnings.warn(
        f"{metric}: float64 (or wide integer) inputs are kept as float32 pairs (8 bytes per sample and output), "
        "as torchmetrics keeps them in the metric's dtype: values closer than float32's resolution become ties. "
        "Make the metric while torch's default dtype is float64 to keep float64 pairs (16 bytes).",
        UserWarning,
        stacklevel=stacklevel_outside_torchtally(),
    )


def require_samples(pairs: Tensor, metric: str) -> None:
    if pairs.shape[0] == 0:
        raise ValueError(f"{metric}: no samples were seen, there is nothing to rank (No samples to concatenate)")


# -- ranks ---------------------------------------------------------------------------------------


def _warn_undefined(metric: str, undefined: Tensor) -> None:
    which = undefined.nonzero().reshape(-1).tolist()
    warnings.warn(
        f"{metric}: output(s) {which} have constant preds or target (or fewer than 2 samples); "
        "their correlation is undefined: NaN",
        UserWarning,
        stacklevel=stacklevel_outside_torchtally(),
    )


def spearman(pairs: Tensor) -> Tensor:
    """Spearman's rho per output (float64 [D]) of pairs [N, 2, D]: Pearson's correlation of the
    average ranks, clamped to [-1, 1]; NaN with a warning for a constant column or N < 2."""
    n, _, d = pairs.shape
    ranks = torch.empty(n, 2 * d, dtype=_F64, device=pairs.device)
    kernel.average_ranks(ranks, pairs.reshape(n, 2 * d))  # every column ranked on its own
    ranks = ranks.reshape(n, 2, d)
    dev = ranks - ranks.mean(0) if ranks.shape[0] else ranks
    rx, ry = dev[:, 0], dev[:, 1]
    var_x, var_y = (rx * rx).sum(0), (ry * ry).sum(0)
    rho = ((rx * ry).sum(0) / (var_x.sqrt() * var_y.sqrt())).clamp(-1.0, 1.0)
    undefined = (var_x == 0) | (var_y == 0)
    if bool(undefined.any()):
        _warn_undefined("spearman", undefined)
        rho = torch.where(undefined, torch.full_like(rho, float("nan")), rho)
    return rho


# -- Kendall's tau ---------------------------------------------------------------------------------


class KendallCounts:
    """Per output: n, concordant and discordant pairs, the distinct values of preds and target,
    and their tie statistics (sum of t(t-1)/2, t(t-1)(t-2), t(t-1)(2t+5) over runs of t ties),
    counted by one kernel call over every output (kernels.regression.kendall_counts)."""

    def __init__(self, pairs: Tensor) -> None:
        self.n = pairs.shape[0]
        stats = torch.empty(pairs.shape[2], 11, dtype=_F64, device=pairs.device)
        kernel.kendall_counts(stats, pairs)
        self.con_minus_dis = stats[:, 0]  # exact below 2**53 pairs
        self.concordant, self.discordant = stats[:, 1], stats[:, 2]
        self.distinct_x, self.distinct_y = stats[:, 3], stats[:, 4]
        self.ties_x, self.ties_x1, self.ties_x2 = stats[:, 5], stats[:, 6], stats[:, 7]
        self.ties_y, self.ties_y1, self.ties_y2 = stats[:, 8], stats[:, 9], stats[:, 10]


def kendall_tau(counts: KendallCounts, variant: str) -> Tensor:
    """Kendall's tau per output (float64 [D]), clamped to [-1, 1]; NaN (with a warning) where
    it is undefined (a constant column, fewer than 2 samples)."""
    s, n = counts.con_minus_dis, float(counts.n)
    if variant == "a":
        tau = s / (counts.concordant + counts.discordant)
    elif variant == "b":
        n0 = n * (n - 1) / 2
        tau = s / ((n0 - counts.ties_x) * (n0 - counts.ties_y)).sqrt()
    else:
        m = torch.minimum(counts.distinct_x, counts.distinct_y)
        tau = 2 * s / (n * n * (m - 1) / m)
    undefined = ~torch.isfinite(tau)
    if bool(undefined.any()):
        _warn_undefined("kendall", undefined)
        tau = torch.where(undefined, torch.full_like(tau, float("nan")), tau)
    return tau.clamp(-1.0, 1.0)


def kendall_p_value(counts: KendallCounts, variant: str, alternative: str) -> Tensor:
    """The asymptotic p-value (float64 [D]) of the test of tau = 0 against ``alternative``:
    z = (C - D) / sd(C - D) under independence, with the tie-corrected variance for variants
    "b" and "c" (the no-ties one for "a", as torchmetrics)."""
    s, n = counts.con_minus_dis, float(counts.n)
    base = n * (n - 1) * (2 * n + 5)
    if variant == "a":
        z = 3 * s / torch.sqrt(torch.full_like(s, base / 2))
    else:
        m = n * (n - 1)
        var = (base - counts.ties_x2 - counts.ties_y2) / 18
        var = var + 2 * counts.ties_x * counts.ties_y / m
        var = var + counts.ties_x1 * counts.ties_y1 / (9 * m * (n - 2))
        z = s / var.sqrt()
    if alternative == "two-sided":
        return 2 * torch.special.ndtr(-z.abs())
    return torch.special.ndtr(-z if alternative == "greater" else z)


def kendall_result(
    pairs: Tensor, variant: str, alternative: Optional[str], dtype: torch.dtype, p_dtype: Optional[torch.dtype] = None
) -> Union[Tensor, Tuple[Tensor, Tensor]]:
    """tau in ``dtype`` (and the p-value, in ``p_dtype`` or ``dtype``, with a test) from pairs
    [N, 2, D]; one output as 0-d."""
    counts = KendallCounts(pairs)
    tau = kendall_tau(counts, variant).to(dtype)
    squeeze = tau.numel() == 1
    tau = tau.reshape(()) if squeeze else tau
    if alternative is None:
        return tau
    p_value = kendall_p_value(counts, variant, alternative).to(p_dtype or dtype)
    return tau, p_value.reshape(()) if squeeze else p_value
