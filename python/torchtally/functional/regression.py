"""Regression metrics: functional forms, and the per-batch state updates the classes share.

States, all float64 (counts int64), chosen so that a sync or merge loses nothing:

* error sums [D] and a count: the sum of squared / absolute / percentage errors is a sum of
  non-negative terms, which float64 adds without cancellation ("sum" reduce);
* residual/target moments [2D, 6]: rows 0..D-1 are the moments of ``target - preds``, rows
  D..2D-1 those of ``target``, columns (n, sum, mean, m2, min, max) as csrc/API.md. R2 and
  explained variance read it; merged with Chan's formula, so targets with means of 1e6 and a
  spread of 1 keep their digits (torchmetrics' sums of squares do not). D is read from the
  first batch (rows = 0 before it), as torchmetrics infers the number of outputs;
* co-moments [D, 6] of (preds, target) for Pearson: (n, mean_x, mean_y, m2_x, m2_y, c_xy);
* an input form (int64 [1 + k]): the float dtype code of the inputs seen (see
  _regression_inputs.FLOAT_CODES; 0 for integer inputs) then the k dims after dim 0, or []
  before any batch. torchmetrics' result dtype for R2, explained variance and Pearson is its
  float state's dtype promoted by the inputs' (float64 inputs give float64), and explained
  variance keeps the shape of [N, d1, d2, ...] outputs: the form remembers both.

Results follow torchmetrics: NaN for a mean over no samples, a ValueError for R2 over fewer
than 2. Functional forms return the inputs' promoted float dtype (torch's default dtype for
integer inputs), as torchmetrics' do. Results carry no gradient.

    >>> import torch
    >>> from torchtally.functional import mean_squared_error, r2_score
    >>> preds, target = torch.tensor([2.5, 0.0, 2.0, 8.0]), torch.tensor([3.0, -0.5, 2.0, 7.0])
    >>> mean_squared_error(preds, target)
    tensor(0.3750)
    >>> r2_score(preds, target)
    tensor(0.9486)
"""
import warnings
from typing import Optional, Sequence, Tuple

import torch
from torch import Tensor

from .. import kernels
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
# |target| is clamped to this before dividing, as torchmetrics does (so a target of 0 gives a
# huge term, not inf; scikit-learn clamps at float64's eps, 2.2e-16, instead).
MAPE_EPS = 1.17e-06


# -- error sums ------------------------------------------------------------------------------


def squared_error_sum(preds: Tensor, target: Tensor, num_outputs: int,
                      device: Optional[torch.device] = None) -> Tuple[Tensor, int]:
    """(sum of squared errors [D] float64, number of samples) of one batch."""
    p, t = _error_inputs(preds, target, num_outputs, device)
    diff = t.to(_F64) - p.to(_F64)
    total = (diff * diff).sum(0)
    inp.require_finite(total, p, t)
    return total, diff.shape[0]


def absolute_error_sum(preds: Tensor, target: Tensor, num_outputs: int,
                       device: Optional[torch.device] = None) -> Tuple[Tensor, int]:
    """(sum of absolute errors [D] float64, number of samples) of one batch."""
    p, t = _error_inputs(preds, target, num_outputs, device)
    total = (t.to(_F64) - p.to(_F64)).abs().sum(0)
    inp.require_finite(total, p, t)
    return total, p.shape[0]


def absolute_percentage_error_sum(preds: Tensor, target: Tensor,
                                  device: Optional[torch.device] = None) -> Tuple[Tensor, int]:
    """(sum of |target - preds| / max(|target|, MAPE_EPS) float64, number of elements)."""
    p, t = inp.flat(preds, target, device)
    t64 = t.to(_F64)
    total = ((t64 - p.to(_F64)).abs() / t64.abs().clamp_min(MAPE_EPS)).sum()
    inp.require_finite(total, p, t)
    return total, p.numel()


def _error_inputs(preds, target, num_outputs, device):
    """num_outputs = 1: any shape, flattened; else [N, D]. Returned as [N, D]."""
    if num_outputs == 1:
        p, t = inp.flat(preds, target, device)
        return p[:, None], t[:, None]
    return inp.columns(preds, target, num_outputs, device)


def as_result(value: Tensor, dtype: torch.dtype) -> Tensor:
    """``value`` in ``dtype``; a single element as a 0-d tensor (torchmetrics squeezes those)."""
    value = value.to(dtype)
    return value.reshape(()) if value.numel() == 1 else value


def mean_of(total: Tensor, count: object, dtype: torch.dtype) -> Tensor:
    """total / count in ``dtype``: NaN where count is 0, as torchmetrics' 0 / 0."""
    return as_result(total / count, dtype)


# -- the input form (dtype and output shape of the inputs seen) ----------------------------------

Form = Tuple[int, ...]  # (float dtype code, dims after dim 0...)


def merge_forms(forms: Sequence[Form]) -> Form:
    """One form for inputs of these forms ((): none seen): the widest dtype code, and their
    output shape, which must agree (a 1-D input and an [N, 1] input agree)."""
    seen = [f for f in forms if f]
    if not seen:
        return ()
    code = max(f[0] for f in seen)
    shapes = {f[1:] for f in seen}
    if len(shapes) > 1:
        ones = {(), (1,)}
        if shapes != ones:
            raise ValueError(
                f"preds: expected every batch to have the same shape after dim 0, got {sorted(shapes)} "
                "(torchmetrics would broadcast one batch's outputs onto another's)"
            )
        shapes = {(1,)}
    return (code,) + shapes.pop()


def read_form(state: Tensor) -> Form:
    return tuple(state.tolist()) if state.numel() else ()


def form_tensor(form: Form, device: torch.device) -> Tensor:
    return torch.tensor(form, dtype=torch.int64, device=device)


def form_merge_values(values: Sequence[Tensor]) -> Tensor:
    """The merge of input-form states (ranks, merge_state, forward)."""
    return form_tensor(merge_forms([read_form(v) for v in values]), values[0].device)


class FormTracker:
    """Keeps a metric's input-form state up to date without reading it back on every update.

    ``check(state, form)`` returns the merged form to store, or None when ``state`` already
    covers ``form``; it reads the state (a device sync) only when the state object is not the
    one this tracker last wrote (a reset, a merge or a load replaced it) or the form is new.
    ``wrote(state, form)`` records the state object just stored. This relies on Metric's rule
    that reset, merge, load, sync and forward replace a state tensor instead of writing into it:
    the object this tracker wrote holds what it wrote.
    """

    __slots__ = ("_state", "_form")

    def __init__(self) -> None:
        self._state: Optional[Tensor] = None
        self._form: Form = ()

    def check(self, state: Tensor, form: Form) -> Optional[Form]:
        if self._state is state and merge_forms([self._form, form]) == self._form:
            return None
        current = read_form(state)
        merged = merge_forms([current, form])
        if merged == current:
            self.wrote(state, current)
            return None
        return merged

    def wrote(self, state: Tensor, form: Form) -> None:
        self._state, self._form = state, form

    def __reduce__(self):  # a copy remembers nothing (it reads its state once)
        return (FormTracker, ())


# -- moments-based states --------------------------------------------------------------------


def empty_moments(rows: int, device: Optional[torch.device] = None) -> Tensor:
    """A moments state with no samples: (0, 0, 0, 0, +inf, -inf) per row."""
    state = torch.zeros(rows, 6, dtype=_F64, device=device)
    state[:, 4], state[:, 5] = float("inf"), float("-inf")
    return state


def residual_moments_update(state: Tensor, p: Tensor, t: Tensor) -> Tensor:
    """Fold a checked batch [N, D] into a residual/target moments state [2D, 6] (module
    docstring); returns the state: a new one for the first batch (``state`` has 0 rows), else
    ``state`` updated in place. A batch whose D differs from the state's is a ValueError, with
    the state unchanged."""
    d = p.shape[1]
    if state.shape[0] not in (0, 2 * d):
        raise ValueError(
            f"preds: expected {state.shape[0] // 2} output(s) per sample as in earlier batches, got {d} "
            f"(shape {list(p.shape)})"
        )
    residual = t.to(_F64) - p.to(_F64)
    inp.require_finite(residual.sum(), p, t)  # NaN or inf in preds or target makes a residual so
    if state.shape[0] == 0:
        state = empty_moments(2 * d, state.device)
    # Two kernel calls write one state: every argument is checked above, and the call that reads
    # the caller's tensor goes first, so that nothing is written if a kernel still refuses it.
    # The second reads only the residuals made here (float64, contiguous, finite).
    kernels.moments_update(state[d:], inp.as_float(t), None)
    kernels.moments_update(state[:d], residual, None)
    return state


def check_moments_state(name: str, state: Tensor, comoments: bool = False) -> None:
    """ValueError naming the state when a loaded (co-)moments state could not come from updates:
    a residual/target state with an odd number of rows, or a NaN, or a negative count or sum of
    squares (columns n and m2; for co-moments n, m2_x and m2_y)."""
    if not comoments and state.shape[0] % 2:
        raise ValueError(f"'{name}': expected 2 rows per output (residual, then target), got {state.shape[0]} rows")
    if not state.numel():
        return
    if bool(torch.isnan(state).any()):
        raise ValueError(f"'{name}': NaN (an update never stores one)")
    columns = (0, 3, 4) if comoments else (0, 3)
    if bool((state[:, list(columns)] < 0).any()):
        raise ValueError(f"'{name}': expected counts and sums of squares >= 0 (columns {list(columns)})")


def merge_moments(values: Sequence[Tensor], comoments: bool = False) -> Tensor:
    """Chan's merge of several moments (or co-moments) states, in order; states with 0 rows
    (nothing seen) are skipped, the others must have one shape."""
    seen = [v for v in values if v.shape[0]]
    if not seen:
        return values[0]
    if any(v.shape != seen[0].shape for v in seen):
        counts = sorted({v.shape[0] // (1 if comoments else 2) for v in seen})
        raise ValueError(
            f"moments of {' and '.join(map(str, counts))} outputs cannot be merged: every batch (and every rank) "
            "must have the same number of outputs per sample"
        )
    out = seen[0].clone(memory_format=torch.contiguous_format)
    merge = kernels.comoments_merge if comoments else kernels.moments_merge
    for other in seen[1:]:
        merge(out, other.to(out.device).contiguous())
    return out


def _forced_ratio_score(num: Tensor, den: Tensor) -> Tensor:
    """1 - num/den; 1 where num = 0, 0 where only den = 0 (torchmetrics' and scikit-learn's
    values for perfect predictions and for a constant target)."""
    num_zero, den_zero = num == 0, den == 0
    score = 1.0 - num / torch.where(den_zero, torch.ones_like(den), den)
    score = torch.where(den_zero, torch.zeros_like(score), score)
    return torch.where(num_zero, torch.ones_like(score), score)


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
    res, tgt = state[:d], state[d:]
    n = tgt[:, 0]
    var_res = torch.where(res[:, 4] == res[:, 5], torch.zeros_like(res[:, 3]), res[:, 3] / n)
    var_tgt = _ss_tot(tgt) / n
    return _average(_forced_ratio_score(var_res, var_tgt), var_tgt, multioutput)


def comoments_update(state: Tensor, p: Tensor, t: Tensor) -> None:
    """Fold a checked batch [N, D] into a co-moments state [D, 6] of (preds, target), in place."""
    p, t = inp.as_float(p), inp.as_float(t)
    inp.require_finite(p.sum() + t.sum(), p, t)
    kernels.comoments_update(state, p, t)


def pearson_from_comoments(state: Tensor) -> Tensor:
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
            f"pearson: output(s) {which} have a zero variance of preds or target (or fewer than 2 samples); "
            "their correlation is NaN (The variance of predictions or target is close to zero.)",
            UserWarning,
            stacklevel=3,
        )
        r = torch.where(undefined, torch.full_like(r, float("nan")), r)
    return r


# -- cosine similarity -----------------------------------------------------------------------

COSINE_REDUCTIONS = ("sum", "mean", "none", None)


def check_cosine_reduction(reduction: object) -> Optional[str]:
    if reduction not in COSINE_REDUCTIONS:
        raise ValueError(f"reduction: expected one of {COSINE_REDUCTIONS}, got {reduction!r}")
    return reduction  # type: ignore[return-value]


def cosine_rows(preds: Tensor, target: Tensor, device: Optional[torch.device] = None) -> Tensor:
    """The cosine similarity of each row pair, float64 [N]; a zero-norm row gives NaN (0 / 0)."""
    p, t = inp.rows(preds, target, device)
    p64, t64 = p.to(_F64), t.to(_F64)
    norms = torch.linalg.vector_norm(p64, dim=1) * torch.linalg.vector_norm(t64, dim=1)
    inp.require_finite(norms.sum(), p, t)
    return (p64 * t64).sum(1) / norms


# -- functional forms ------------------------------------------------------------------------


def mean_squared_error(preds: Tensor, target: Tensor, squared: bool = True, num_outputs: int = 1) -> Tensor:
    """Mean squared error (``squared=False``: its root). num_outputs = 1 flattens any shape;
    num_outputs = D takes [N, D] and returns one value per output.

        >>> mean_squared_error(torch.tensor([1.0, 2.0]), torch.tensor([1.0, 4.0]), squared=False)
        tensor(1.4142)
    """
    total, n = squared_error_sum(preds, target, inp.check_num_outputs(num_outputs))
    mse = total / n
    mse = mse if squared else mse.sqrt()
    return _functional_result(mse, preds, target, num_outputs)


def mean_absolute_error(preds: Tensor, target: Tensor, num_outputs: int = 1) -> Tensor:
    """Mean absolute error (shapes as mean_squared_error).

        >>> mean_absolute_error(torch.tensor([1.0, 2.0]), torch.tensor([1.5, 4.0]))
        tensor(1.2500)
    """
    total, n = absolute_error_sum(preds, target, inp.check_num_outputs(num_outputs))
    return _functional_result(total / n, preds, target, num_outputs)


def _functional_result(value: Tensor, preds: Tensor, target: Tensor, num_outputs: int) -> Tensor:
    value = value.to(inp.functional_dtype(preds, target))
    return value.reshape(()) if num_outputs == 1 else value


def mean_absolute_percentage_error(preds: Tensor, target: Tensor) -> Tensor:
    """Mean of |target - preds| / max(|target|, 1.17e-6) over all elements (a fraction, not %).

        >>> mean_absolute_percentage_error(torch.tensor([1.0, 3.0]), torch.tensor([2.0, 4.0]))
        tensor(0.3750)
    """
    total, n = absolute_percentage_error_sum(preds, target)
    return (total / n).to(inp.functional_dtype(preds, target))


def _moments_of(preds: Tensor, target: Tensor, max_dims: Optional[int]) -> Tuple[Tensor, Tuple[int, ...], Tensor, Tensor]:
    p, t, shape = inp.outputs(preds, target, max_dims)
    state = residual_moments_update(empty_moments(0, p.device), p, t)
    return state, shape, p, t


def r2_score(preds: Tensor, target: Tensor, adjusted: int = 0, multioutput: str = "uniform_average") -> Tensor:
    """Coefficient of determination of [N] or [N, D] inputs (see r2_from_moments for the edge
    cases; ``adjusted`` = number of regressors for the adjusted R2).

        >>> r2_score(torch.tensor([1.0, 2.0, 3.0]), torch.tensor([1.0, 2.0, 4.0]))
        tensor(0.7857)
    """
    adjusted, multioutput = inp.check_adjusted(adjusted), inp.check_multioutput(multioutput)
    state, shape, p, t = _moments_of(preds, target, max_dims=2)
    score = r2_from_moments(state, multioutput, adjusted).to(inp.functional_dtype(p, t))
    return score.reshape(shape) if multioutput == "raw_values" else score


def explained_variance(preds: Tensor, target: Tensor, multioutput: str = "uniform_average") -> Tensor:
    """Explained variance 1 - Var(target - preds) / Var(target) of [N] or [N, d1, ...] inputs.

        >>> explained_variance(torch.tensor([1.0, 2.0, 3.0]), torch.tensor([2.0, 3.0, 4.0]))
        tensor(1.)
    """
    multioutput = inp.check_multioutput(multioutput)
    state, shape, p, t = _moments_of(preds, target, max_dims=None)
    score = explained_variance_from_moments(state, multioutput).to(inp.functional_dtype(p, t))
    return score.reshape(shape) if multioutput == "raw_values" and state.shape[0] else score


def pearson_corrcoef(preds: Tensor, target: Tensor) -> Tensor:
    """Pearson correlation per column of [N] or [N, D] inputs (NaN for a constant column).

        >>> pearson_corrcoef(torch.tensor([1.0, 2.0, 3.0]), torch.tensor([1.0, 2.0, 2.5]))
        tensor(0.9820)
    """
    d = preds.shape[1] if isinstance(preds, Tensor) and preds.dim() == 2 else 1
    p, t = inp.pearson(preds, target, d)
    state = torch.zeros(d, 6, dtype=_F64, device=p.device)
    comoments_update(state, p, t)
    # torchmetrics' dtype: preds' for 1-D inputs, the promoted one for [N, D].
    dtype = inp.functional_dtype(p, p) if preds.dim() == 1 else inp.functional_dtype(p, t)
    return as_result(pearson_from_comoments(state), dtype)


def cosine_similarity(preds: Tensor, target: Tensor, reduction: Optional[str] = "sum") -> Tensor:
    """Cosine similarity of each row of [N, d] preds with the same row of target, reduced by
    ``reduction``: "sum" (default, as torchmetrics), "mean", or "none"/None (one value per
    row). float32, as torchmetrics.

        >>> cosine_similarity(torch.tensor([[1.0, 0.0], [1.0, 1.0]]), torch.tensor([[1.0, 0.0], [0.0, 1.0]]))
        tensor(1.7071)
    """
    reduction = check_cosine_reduction(reduction)
    sims = cosine_rows(preds, target)
    if reduction == "sum":
        sims = sims.sum()
    elif reduction == "mean":
        sims = sims.mean()
    return sims.to(torch.float32)
