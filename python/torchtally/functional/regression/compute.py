"""Regression results from the states (see update.py for their layout): R2, explained variance,
Pearson, Lin's concordance, and the result dtypes torchmetrics returns."""

import math
import warnings
from typing import Dict, List, Optional, Tuple, Union

import torch
from torch import Tensor

from ...utilities.result_dtype import cast_result

_F64 = torch.float64


def as_result(value: Tensor, dtype: torch.dtype) -> Tensor:
    """``value`` in ``dtype``; a single element as a 0-d tensor (torchmetrics squeezes those). A
    finite value that does not fit ``dtype`` raises ValueError (never a silent inf)."""
    fix = "use float64 (a metric's set_dtype(torch.float64), or float64 inputs to a functional form)"
    value = cast_result(value, dtype, "regression", fix)
    return value.reshape(()) if value.numel() == 1 else value


def mean_of(total: Tensor, count: Union[Tensor, float], dtype: torch.dtype) -> Tensor:
    """total / count in ``dtype``: NaN where count is 0, as torchmetrics' 0 / 0."""
    if total.numel() == 1 and total.is_cpu:
        return scalar_result(ratio(total.item(), float(count)), dtype)
    return as_result(total / count, dtype)


# Most results are one float64 number from two or three scalar states: read as Python floats and
# combined in Python's float64 arithmetic (the same IEEE operations, so the same bits, as torch's
# float64 ops), a compute costs one tensor made instead of several small tensor ops.


def scalars(*states: Tensor) -> Optional[list]:
    """The values of one-element CPU states as Python numbers, or None when one is not (a state
    on another device, or of several elements: the caller takes its tensor path)."""
    for s in states:
        if s.numel() != 1 or not s.is_cpu:
            return None
    return [s.item() for s in states]


def ratio(total: float, count: float) -> float:
    """total / count as float64 division gives it: NaN for 0 / 0 (or a NaN), +-inf for x / 0."""
    if count == 0:
        return math.nan if total == 0 or total != total else math.copysign(math.inf, total)
    return total / count


def at_least(value: float, floor: float) -> float:
    """torch.clamp(value, min=floor) of a number: a NaN stays NaN."""
    return floor if value < floor else value


def root(value: float) -> float:
    """float64 sqrt (NaN below 0, as torch's)."""
    return math.sqrt(value) if value >= 0 else math.nan


_LARGEST: Dict[torch.dtype, float] = {}


def scalar_result(value: float, dtype: torch.dtype, device: Optional[torch.device] = None) -> Tensor:
    """as_result of one float64 number: a 0-d tensor of ``dtype``, the ValueError where a finite
    value does not fit it."""
    largest = _LARGEST.get(dtype)
    if largest is None:
        largest = _LARGEST.setdefault(dtype, torch.finfo(dtype).max)
    if abs(value) > largest and math.isfinite(value):  # it may round to inf: as_result decides
        return as_result(torch.tensor(value, dtype=_F64, device=device), dtype)
    return torch.scalar_tensor(value, dtype=dtype, device=device)  # (half torch.tensor's cost)


def _forced_ratio_score(num: Tensor, den: Tensor) -> Tensor:
    """1 - num/den; 1 where num = 0, 0 where only den = 0 (torchmetrics' and scikit-learn's
    values for perfect predictions and for a constant target)."""
    num_zero, den_zero = num == 0, den == 0
    score = 1.0 - num / torch.where(den_zero, torch.ones_like(den), den)
    score = torch.where(den_zero, torch.zeros_like(score), score)
    return torch.where(num_zero, torch.ones_like(score), score)


def _forced_ratio_number(num: float, den: float) -> float:
    """_forced_ratio_score of one output, in Python floats (the same float64 operations)."""
    if num == 0:
        return 1.0
    return 0.0 if den == 0 else 1.0 - num / den


def _average_number(score: float, weight: float, multioutput: str) -> Tensor:
    """_average of one output as float64 (variance_weighted: (s w) / w, NaN for w = 0): [1] for
    raw_values, else 0-d, as the tensor path."""
    if multioutput == "raw_values":
        return torch.tensor([score], dtype=_F64)
    if multioutput == "variance_weighted":
        score = float("nan") if weight == 0 else (score * weight) / weight
    return torch.tensor(score, dtype=_F64)


def _one_output(state: Tensor) -> Optional[Tuple[List[float], List[float]]]:
    """The residual and target rows of a one-output CPU moments state [2, 6] with samples, read
    in one go: compute's numbers in Python floats cost a tenth of a dozen tensor ops; None for
    other states (the tensor path)."""
    if state.shape[0] != 2 or not state.is_cpu:
        return None
    res, tgt = state.tolist()
    return (res, tgt) if tgt[0] > 0 else None


def _average(scores: Tensor, weights: Tensor, multioutput: str) -> Tensor:
    """raw_values, uniform_average, or variance_weighted (NaN when every weight is 0, as
    torchmetrics' 0 / 0)."""
    if multioutput == "raw_values":
        return scores
    if multioutput == "variance_weighted":
        return (scores * weights).sum() / weights.sum()
    return scores.mean()


def _ss_tot(tgt: Tensor) -> Tensor:
    """The target's sum of squared deviations, exactly 0 for a constant column."""
    return torch.where(tgt[:, 4] == tgt[:, 5], torch.zeros_like(tgt[:, 3]), tgt[:, 3])


def r2_from_moments(state: Tensor, multioutput: str = "uniform_average", adjusted: int = 0) -> Tensor:
    """R2 (float64) from a residual/target moments state [2D, 6].

    SS_res = m2 + n * mean^2 of the residual, SS_tot = m2 of the target (0 for a constant
    target, detected exactly: min == max). Per output 1 - SS_res / SS_tot, 1 when SS_res = 0,
    0 when only SS_tot = 0. Fewer than 2 samples: ValueError, as torchmetrics.
    """
    d = state.shape[0] // 2
    n = float(state[d, 0]) if d else 0.0
    if n < 2:
        raise ValueError(f"R2 needs at least 2 samples, got {n:g} (Needs at least two samples to calculate r2 score.)")
    rows = _one_output(state)
    if rows is not None:
        r, t = rows
        ss_tot_number = 0.0 if t[4] == t[5] else t[3]
        score = _forced_ratio_number(r[3] + n * r[2] * r[2], ss_tot_number)
        scores = _average_number(score, ss_tot_number, multioutput)
    else:
        res, tgt = state[:d], state[d:]
        ss_res = res[:, 3] + n * res[:, 2] * res[:, 2]
        ss_tot = _ss_tot(tgt)
        scores = _average(_forced_ratio_score(ss_res, ss_tot), ss_tot, multioutput)
    if adjusted:
        if adjusted > n - 1:
            warnings.warn(
                f"adjusted={adjusted} regressors for {n:g} samples: More independent regressions than data points "
                "in adjusted r2 score. Falls back to standard r2 score.",
                UserWarning,
                stacklevel=3,
            )
        elif adjusted == n - 1:
            warnings.warn(
                f"adjusted={adjusted} regressors for {n:g} samples: Division by zero in adjusted r2 score. "
                "Falls back to standard r2 score.",
                UserWarning,
                stacklevel=3,
            )
        else:
            scores = 1.0 - (1.0 - scores) * (n - 1) / (n - adjusted - 1)
    return scores


def explained_variance_from_moments(state: Tensor, multioutput: str = "uniform_average") -> Tensor:
    """1 - Var(target - preds) / Var(target) per output (float64): 1 when the residual's
    variance is 0, 0 when only the target's is (each detected exactly: min == max). NaN over no
    samples (0 / 0, as torchmetrics)."""
    d = state.shape[0] // 2
    if d == 0:
        return torch.tensor(float("nan"), dtype=_F64, device=state.device)
    rows = _one_output(state)
    if rows is not None:
        r, t = rows
        var_tgt_number = (0.0 if t[4] == t[5] else t[3]) / t[0]
        var_res_number = 0.0 if r[4] == r[5] else r[3] / t[0]
        return _average_number(_forced_ratio_number(var_res_number, var_tgt_number), var_tgt_number, multioutput)
    res, tgt = state[:d], state[d:]
    n = tgt[:, 0]
    var_res = torch.where(res[:, 4] == res[:, 5], torch.zeros_like(res[:, 3]), res[:, 3] / n)
    var_tgt = _ss_tot(tgt) / n
    return _average(_forced_ratio_score(var_res, var_tgt), var_tgt, multioutput)


def pearson_from_comoments(state: Tensor, metric: str = "pearson") -> Tensor:
    """c_xy / sqrt(m2_x * m2_y) per output (float64), clamped to [-1, 1].

    An output whose preds or target have zero variance (exactly constant, fewer than 2
    samples, or a variance below float64's range) gives NaN, with a warning as torchmetrics.
    """
    n, m2x, m2y, cxy = state[:, 0], state[:, 3], state[:, 4], state[:, 5]
    r = (cxy / (m2x.sqrt() * m2y.sqrt())).clamp(-1.0, 1.0)
    undefined = (m2x == 0) | (m2y == 0) | (n < 2)
    if bool(undefined.any()):
        which = undefined.nonzero().reshape(-1).tolist()
        warnings.warn(
            f"{metric}: output(s) {which} have a zero variance of preds or target (or fewer than 2 samples); "
            "their correlation is NaN (The variance of predictions or target is close to zero.)",
            UserWarning,
            stacklevel=3,
        )
        r = torch.where(undefined, torch.full_like(r, float("nan")), r)
    return r


def concordance_from_comoments(state: Tensor) -> Tensor:
    """Lin's concordance correlation per output (float64) from Pearson's co-moments state:
    2 r s_x s_y / (s_x^2 + s_y^2 + (mean_x - mean_y)^2), with r Pearson's correlation and s^2
    the sample variances (n - 1 in the denominator, as torchmetrics). NaN, with Pearson's
    warning, where Pearson's correlation is (a constant column, fewer than 2 samples)."""
    n, mean_x, mean_y, m2x, m2y = state[:, 0], state[:, 1], state[:, 2], state[:, 3], state[:, 4]
    r = pearson_from_comoments(state, "concordance")
    var_x, var_y = m2x / (n - 1), m2y / (n - 1)
    return 2.0 * r * var_x.sqrt() * var_y.sqrt() / (var_x + var_y + (mean_x - mean_y) ** 2)
