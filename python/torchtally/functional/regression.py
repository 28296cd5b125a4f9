"""Regression metrics: functional forms, and the per-batch state updates the classes share.

States, all float64 (counts int64), chosen so that a sync or merge loses nothing:

* error sums [D] and a count: the sum of squared / absolute / percentage errors is a sum of
  non-negative terms, which float64 adds without cancellation ("sum" reduce);
* residual/target moments [2D, 6]: rows 0..D-1 are the moments of ``target - preds``, rows
  D..2D-1 those of ``target``, columns (n, sum, mean, m2, min, max) as csrc/API.md. R2 and
  explained variance read it; merged with Chan's formula, so targets with means of 1e6 and a
  spread of 1 keep their digits (a sum of squares would not);
* co-moments [D, 6] of (preds, target) for Pearson: (n, mean_x, mean_y, m2_x, m2_y, c_xy).

Results are float64. A result over no samples raises NotComputableError.

    >>> import torch
    >>> from torchtally.functional import mean_squared_error, r2_score
    >>> preds, target = torch.tensor([2.5, 0.0, 2.0, 8.0]), torch.tensor([3.0, -0.5, 2.0, 7.0])
    >>> mean_squared_error(preds, target)
    tensor(0.3750, dtype=torch.float64)
    >>> round(float(r2_score(preds, target)), 4)
    0.9486
"""
import warnings
from typing import Optional, Tuple

import torch
from torch import Tensor

from ..errors import NotComputableError
from . import _kernels
from . import _regression_inputs as inp

__all__ = [
    "cosine_similarity",
    "explained_variance",
    "mean_absolute_error",
    "mean_absolute_percentage_error",
    "mean_squared_error",
    "pearson_corrcoef",
    "r2_score",
]

_F64 = torch.float64
# |target| is clamped to this before dividing (float32's smallest normal, as torchmetrics does).
MAPE_EPS = torch.finfo(torch.float32).tiny


def _not_computable(what: str) -> NotComputableError:
    return NotComputableError(f"{what}: no samples were seen, the result is undefined")


# -- error sums ------------------------------------------------------------------------------


def squared_error_sum(preds: Tensor, target: Tensor, num_outputs: int,
                      device: Optional[torch.device] = None) -> Tuple[Tensor, int]:
    """(sum of squared errors [D] float64, number of samples) of one batch."""
    p, t = _error_inputs(preds, target, num_outputs, device)
    diff = t.to(_F64) - p.to(_F64)
    return (diff * diff).sum(0), diff.shape[0]


def absolute_error_sum(preds: Tensor, target: Tensor, num_outputs: int,
                       device: Optional[torch.device] = None) -> Tuple[Tensor, int]:
    """(sum of absolute errors [D] float64, number of samples) of one batch."""
    p, t = _error_inputs(preds, target, num_outputs, device)
    return (t.to(_F64) - p.to(_F64)).abs().sum(0), p.shape[0]


def absolute_percentage_error_sum(preds: Tensor, target: Tensor,
                                  device: Optional[torch.device] = None) -> Tuple[Tensor, int]:
    """(sum of |target - preds| / max(|target|, MAPE_EPS) float64, number of elements)."""
    p, t = inp.flat(preds, target, device)
    t64 = t.to(_F64)
    return ((t64 - p.to(_F64)).abs() / t64.abs().clamp_min(MAPE_EPS)).sum(), p.numel()


def _error_inputs(preds, target, num_outputs, device):
    """num_outputs = 1: any shape, flattened; else [N, D]. Returned as [N, D]."""
    if num_outputs == 1:
        p, t = inp.flat(preds, target, device)
        return p[:, None], t[:, None]
    return inp.columns(preds, target, num_outputs, device)


def mean_of(total: Tensor, count: Tensor, what: str, squeeze: bool = True) -> Tensor:
    """total / count, a scalar when there is one column and ``squeeze``."""
    if int(count) == 0:
        raise _not_computable(what)
    value = total / count
    return value.reshape(()) if squeeze and value.numel() == 1 else value


# -- moments-based states --------------------------------------------------------------------


def empty_moments(rows: int, device: Optional[torch.device] = None) -> Tensor:
    """A moments state with no samples: (0, 0, 0, 0, +inf, -inf) per row."""
    state = torch.zeros(rows, 6, dtype=_F64, device=device)
    state[:, 4], state[:, 5] = float("inf"), float("-inf")
    return state


def residual_moments_update(state: Tensor, preds: Tensor, target: Tensor, num_outputs: int) -> None:
    """Fold a batch into a residual/target moments state [2D, 6] (module docstring), in place.

    Everything is checked before the first kernel call, so a rejected batch leaves it unchanged.
    """
    p, t = inp.columns(preds, target, num_outputs, state.device)
    residual = t.to(_F64) - p.to(_F64)
    _kernels.moments_update(state[:num_outputs], residual, None)
    _kernels.moments_update(state[num_outputs:], inp.as_float(t), None)


def merge_moments(values, comoments: bool = False) -> Tensor:
    """Chan's merge of several moments (or co-moments) states of one shape, in order."""
    out = values[0].clone(memory_format=torch.contiguous_format)
    merge = _kernels.comoments_merge if comoments else _kernels.moments_merge
    for other in values[1:]:
        merge(out, other.to(out.device).contiguous())
    return out


def _forced_ratio_score(num: Tensor, den: Tensor, num_zero: Tensor, den_zero: Tensor) -> Tensor:
    """1 - num/den, with scikit-learn's finite values: 1 where num = 0, 0 where only den = 0."""
    score = 1.0 - num / torch.where(den_zero, torch.ones_like(den), den)
    score = torch.where(den_zero, torch.zeros_like(score), score)
    return torch.where(num_zero, torch.ones_like(score), score)


def _average(scores: Tensor, den: Tensor, multioutput: str) -> Tensor:
    if multioutput == "raw_values":
        return scores
    if multioutput == "variance_weighted" and bool((den > 0).any()):
        return (scores * den).sum() / den.sum()
    return scores.mean()


def r2_from_moments(state: Tensor, multioutput: str = "uniform_average", adjusted: int = 0,
                    what: str = "R2Score") -> Tensor:
    """R2 from a residual/target moments state [2D, 6].

    SS_res = m2 + n * mean^2 of the residual, SS_tot = m2 of the target. A constant target
    (min == max) has SS_tot = 0: the score is 1 for perfect predictions, else 0 (scikit-learn's
    force_finite). Fewer than 2 samples give NaN (as scikit-learn).
    """
    d = state.shape[0] // 2
    res, tgt = state[:d], state[d:]
    n = float(tgt[0, 0])
    if n == 0:
        raise _not_computable(what)
    if n < 2:
        warnings.warn(f"{what}: R2 is undefined for fewer than 2 samples; returning NaN", stacklevel=3)
        nan = torch.full((d,), float("nan"), dtype=_F64, device=state.device)
        return nan if multioutput == "raw_values" else nan[0]
    ss_res = res[:, 3] + n * res[:, 2] * res[:, 2]
    ss_tot = torch.where(tgt[:, 4] == tgt[:, 5], torch.zeros_like(tgt[:, 3]), tgt[:, 3])
    perfect = (res[:, 4] == 0) & (res[:, 5] == 0)
    scores = _average(_forced_ratio_score(ss_res, ss_tot, perfect, ss_tot == 0), ss_tot, multioutput)
    if adjusted:
        if adjusted >= n - 1:
            warnings.warn(
                f"{what}: adjusted={adjusted} regressors need more than {adjusted + 1} samples, got {n:g}; "
                "returning the unadjusted R2",
                stacklevel=3,
            )
        else:
            scores = 1.0 - (1.0 - scores) * (n - 1) / (n - adjusted - 1)
    return scores


def explained_variance_from_moments(state: Tensor, multioutput: str = "uniform_average",
                                    what: str = "ExplainedVariance") -> Tensor:
    """1 - Var(target - preds) / Var(target) per column, with scikit-learn's finite values
    (a constant residual counts as zero variance: score 1; a constant target: score 0)."""
    d = state.shape[0] // 2
    res, tgt = state[:d], state[d:]
    n = float(tgt[0, 0])
    if n == 0:
        raise _not_computable(what)
    var_res = torch.where(res[:, 4] == res[:, 5], torch.zeros_like(res[:, 3]), res[:, 3] / n)
    var_tgt = torch.where(tgt[:, 4] == tgt[:, 5], torch.zeros_like(tgt[:, 3]), tgt[:, 3] / n)
    scores = _forced_ratio_score(var_res, var_tgt, var_res == 0, var_tgt == 0)
    return _average(scores, var_tgt, multioutput)


def comoments_update(state: Tensor, preds: Tensor, target: Tensor, num_outputs: int) -> None:
    """Fold a batch into a co-moments state [D, 6] of (preds, target), in place."""
    p, t = inp.columns(preds, target, num_outputs, state.device)
    _kernels.comoments_update(state, inp.as_float(p), inp.as_float(t))


def pearson_from_comoments(state: Tensor, what: str = "PearsonCorrCoef") -> Tensor:
    """c_xy / sqrt(m2_x * m2_y) per column, clamped to [-1, 1]; a scalar for one column.

    A column that is exactly constant (m2 = 0), or fewer than 2 samples, gives NaN (as scipy).
    """
    n, m2x, m2y, cxy = state[:, 0], state[:, 3], state[:, 4], state[:, 5]
    if float(n[0]) == 0:
        raise _not_computable(what)
    r = (cxy / (m2x.sqrt() * m2y.sqrt())).clamp(-1.0, 1.0)
    r = torch.where((m2x == 0) | (m2y == 0), torch.full_like(r, float("nan")), r)
    return r.reshape(()) if r.numel() == 1 else r


# -- cosine similarity -----------------------------------------------------------------------

COSINE_REDUCTIONS = ("sum", "mean", "none", None)


def check_cosine_reduction(reduction: object) -> Optional[str]:
    if reduction not in COSINE_REDUCTIONS:
        raise ValueError(f"reduction: expected one of {COSINE_REDUCTIONS}, got {reduction!r}")
    return reduction  # type: ignore[return-value]


def cosine_rows(preds: Tensor, target: Tensor, device: Optional[torch.device] = None) -> Tensor:
    """The cosine similarity of each row pair, float64 [N]; a zero-norm row gives NaN (0 / 0)."""
    p, t = inp.rows(preds, target, device)
    p, t = p.to(_F64), t.to(_F64)
    dot = (p * t).sum(1)
    return dot / (torch.linalg.vector_norm(p, dim=1) * torch.linalg.vector_norm(t, dim=1))


# -- functional forms ------------------------------------------------------------------------


def _outputs_of(preds: object) -> int:
    return preds.shape[1] if isinstance(preds, Tensor) and preds.dim() == 2 else 1


def mean_squared_error(preds: Tensor, target: Tensor, *, squared: bool = True, num_outputs: int = 1) -> Tensor:
    """Mean squared error (``squared=False``: its root). num_outputs = 1 flattens any shape;
    num_outputs = D takes [N, D] and returns one value per output.

        >>> mean_squared_error(torch.tensor([1.0, 2.0]), torch.tensor([1.0, 4.0]), squared=False)
        tensor(1.4142, dtype=torch.float64)
    """
    total, n = squared_error_sum(preds, target, inp.check_num_outputs(num_outputs))
    mse = mean_of(total, torch.tensor(n), "mean_squared_error")
    return mse if squared else mse.sqrt()


def mean_absolute_error(preds: Tensor, target: Tensor, *, num_outputs: int = 1) -> Tensor:
    """Mean absolute error (shapes as mean_squared_error).

        >>> mean_absolute_error(torch.tensor([1.0, 2.0]), torch.tensor([1.5, 4.0]))
        tensor(1.2500, dtype=torch.float64)
    """
    total, n = absolute_error_sum(preds, target, inp.check_num_outputs(num_outputs))
    return mean_of(total, torch.tensor(n), "mean_absolute_error")


def mean_absolute_percentage_error(preds: Tensor, target: Tensor) -> Tensor:
    """Mean of |target - preds| / max(|target|, 1.18e-38) over all elements (a fraction, not %).

        >>> mean_absolute_percentage_error(torch.tensor([1.0, 3.0]), torch.tensor([2.0, 4.0]))
        tensor(0.3750, dtype=torch.float64)
    """
    total, n = absolute_percentage_error_sum(preds, target)
    return mean_of(total, torch.tensor(n), "mean_absolute_percentage_error")


def r2_score(preds: Tensor, target: Tensor, *, multioutput: str = "uniform_average", adjusted: int = 0) -> Tensor:
    """Coefficient of determination of [N] or [N, D] inputs (see r2_from_moments for the edge
    cases; ``adjusted`` = number of regressors for the adjusted R2).

        >>> r2_score(torch.tensor([1.0, 2.0, 3.0]), torch.tensor([1.0, 2.0, 4.0]))
        tensor(0.7857, dtype=torch.float64)
    """
    multioutput, adjusted = inp.check_multioutput(multioutput), inp.check_adjusted(adjusted)
    d = _outputs_of(preds)
    state = empty_moments(2 * d, getattr(preds, "device", None))
    residual_moments_update(state, preds, target, d)
    return r2_from_moments(state, multioutput, adjusted, "r2_score")


def explained_variance(preds: Tensor, target: Tensor, *, multioutput: str = "uniform_average") -> Tensor:
    """Explained variance 1 - Var(target - preds) / Var(target) of [N] or [N, D] inputs.

        >>> explained_variance(torch.tensor([1.0, 2.0, 3.0]), torch.tensor([2.0, 3.0, 4.0]))
        tensor(1., dtype=torch.float64)
    """
    multioutput = inp.check_multioutput(multioutput)
    d = _outputs_of(preds)
    state = empty_moments(2 * d, getattr(preds, "device", None))
    residual_moments_update(state, preds, target, d)
    return explained_variance_from_moments(state, multioutput, "explained_variance")


def pearson_corrcoef(preds: Tensor, target: Tensor) -> Tensor:
    """Pearson correlation per column of [N] or [N, D] inputs (NaN for a constant column).

        >>> pearson_corrcoef(torch.tensor([1.0, 2.0, 3.0]), torch.tensor([1.0, 2.0, 2.5]))
        tensor(0.9820, dtype=torch.float64)
    """
    d = _outputs_of(preds)
    state = torch.zeros(d, 6, dtype=_F64, device=getattr(preds, "device", None))
    comoments_update(state, preds, target, d)
    return pearson_from_comoments(state, "pearson_corrcoef")


def cosine_similarity(preds: Tensor, target: Tensor, *, reduction: Optional[str] = "sum") -> Tensor:
    """Cosine similarity of each row of [N, d] preds with the same row of target, reduced by
    ``reduction``: "sum" (default, as torchmetrics), "mean", or "none"/None (one value per row).

        >>> cosine_similarity(torch.tensor([[1.0, 0.0], [1.0, 1.0]]), torch.tensor([[1.0, 0.0], [0.0, 1.0]]))
        tensor(1.7071, dtype=torch.float64)
    """
    reduction = check_cosine_reduction(reduction)
    sims = cosine_rows(preds, target)
    if reduction in ("none", None):
        return sims
    if sims.numel() == 0:
        raise _not_computable("cosine_similarity")
    return sims.sum() if reduction == "sum" else sims.mean()
