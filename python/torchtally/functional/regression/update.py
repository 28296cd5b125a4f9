"""Regression: option and input checks, and the per-batch update of the states.

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
  FLOAT_CODES below; 0 for integer inputs) then the k dims after dim 0, or []
  before any batch. torchmetrics' result dtype for R2, explained variance and Pearson is its
  float state's dtype promoted by the inputs' (float64 inputs give float64), and explained
  variance keeps the shape of [N, d1, d2, ...] outputs: the form remembers both.

Every check runs before any state is touched and raises with the argument's name, what was
expected and what arrived: TypeError for a wrong type or dtype, ValueError for a wrong shape,
device or value. Where torchmetrics raises RuntimeError (preds and target of different shapes)
the error is an InputShapeError, a ValueError that is also a RuntimeError, so code written
for either catches it.

* dtypes: float16, bfloat16, float32, float64 or int8-int64 / uint8 tensors (not bool, float8,
  uint16-uint64 or complex: a TypeError); integers are read as float64; meta tensors (no
  values) are a ValueError.
* values: finite only. NaN or +-inf in preds or target is a ValueError naming the first bad
  element (a NaN would silently poison every later result of a streaming metric; torchmetrics
  lets it through). The shape helpers below do not look at values: every update computes a
  small summary of the batch that is NaN or inf whenever an input element is (an error sum,
  the residuals' sum, the inputs' sums) and calls ``require_finite`` on it before touching any
  state, so a finite batch costs one small check and only a bad one is searched.
* shapes, by metric (preds and target always of one shape):
  ``flat``      any shape, flattened into samples (MSE, MAE with num_outputs=1; MAPE);
  ``columns``   [N, D] for D = num_outputs > 1 (MSE, MAE);
  ``outputs``   [N] or [N, d1, ...]: dim 0 holds samples, the rest outputs, read as [N, D]
                (R2Score: at most 2 dims; ExplainedVariance: any number);
  ``pearson``   [N] or [N, num_outputs] ([N, 1] too for one output);
  ``rows``      [N, d] vectors (CosineSimilarity).
"""

import functools
import math
from typing import Optional, Sequence, Tuple

import torch
from torch import Tensor

from ... import kernels
from ...errors import ShapeError
from ...kernels import deferred_checks
from ...kernels import regression as regression_kernels
from ...kernels.ops import compiling, define_op
from ...kernels.reference.checks import describe

MULTIOUTPUTS = ("raw_values", "uniform_average", "variance_weighted")
_F64 = torch.float64
_INTEGER = (torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64)
# What the moments kernels and torch's float64 arithmetic read: not float8 (torch cannot promote
# it), not uint16-uint64 (not every torch op takes them), not complex, not bool.
_REAL = frozenset((torch.float16, torch.bfloat16, torch.float32, torch.float64) + _INTEGER)


# preds and target of different shapes (a ValueError and torchmetrics' RuntimeError)
InputShapeError = ShapeError


# -- options -------------------------------------------------------------------------------------


def check_num_outputs(num_outputs: object) -> int:
    if not isinstance(num_outputs, int) or isinstance(num_outputs, bool) or num_outputs < 1:
        raise ValueError(f"num_outputs: expected a positive int, got {num_outputs!r}")
    return num_outputs


def check_multioutput(multioutput: object) -> str:
    if multioutput not in MULTIOUTPUTS:
        raise ValueError(f"multioutput: expected one of {MULTIOUTPUTS}, got {multioutput!r}")
    return multioutput


def check_adjusted(adjusted: object) -> int:
    if not isinstance(adjusted, int) or isinstance(adjusted, bool) or adjusted < 0:
        raise ValueError(f"adjusted: expected an int >= 0 (the number of regressors), got {adjusted!r}")
    return adjusted


def check_squared(squared: object) -> bool:
    if not isinstance(squared, bool):
        raise ValueError(
            f"squared: Expected argument `squared` to be a boolean (True: MSE, False: RMSE), got {squared!r}"
        )
    return squared


# -- tensors ---------------------------------------------------------------------------------------


def real(name: str, t: object, device: Optional[torch.device] = None) -> Tensor:
    """A floating (float16, bfloat16, float32, float64) or integer tensor, holding data (not on
    the meta device), on ``device`` when given, detached (results carry no gradient, and states
    never join an autograd graph)."""
    if not isinstance(t, Tensor):
        raise TypeError(f"{name}: expected a tensor, got {type(t).__name__}")
    if t.dtype not in _REAL:
        raise TypeError(
            f"{name}: expected a floating or integer tensor, got {describe(t)} (floats: float16, bfloat16, "
            "float32, float64; integers: uint8, int8 to int64)"
        )
    if device is not None and t.device != device:
        raise ValueError(f"{name}: expected a tensor on {device} (the metric's device), got {t.device}")
    if t.is_meta:
        raise ValueError(f"{name}: expected a tensor holding values, got a meta tensor {describe(t)}")
    return t.detach() if t.requires_grad else t  # (a detach costs a microsecond, half a small update)


def finite(name: str, t: Tensor) -> None:
    """NaN or +-inf anywhere is an error naming the first such element."""
    if not t.is_floating_point() or t.numel() == 0:
        return
    if not bool(torch.isfinite(t).all()):
        # ``t`` may be a reshaped view of the input: a flat index is the same in both
        flat = int((~torch.isfinite(t)).reshape(-1).nonzero()[0, 0])
        value = float(t.reshape(-1)[flat])
        raise ValueError(f"{name}: expected finite values, got {value} at flat index {flat}")


def require_finite(summary: Tensor, preds: Tensor, target: Tensor) -> None:
    """Raise for the first NaN or inf of preds, then target, when ``summary`` (a reduction over
    the batch that any NaN or inf input makes NaN or inf) is not finite. A summary that
    overflowed on finite inputs passes: the inputs are searched and nothing is found.
    Inside ``torch.compile`` the check is one custom op (it reads the data, which a traced
    graph cannot branch on), run where the eager check runs: before the state is touched.
    Inside a CUDA metric update in deferred mode the verdict stays on the device and the error
    is raised later (kernels.deferred_checks)."""
    if compiling():
        _require_finite_op(summary, preds, target)
    elif deferred_checks.deferring(summary):
        search = functools.partial(_search_finite, preds, target)
        deferred_checks.hold(deferred_checks.finite(preds, target), search, "preds / target")
    elif not (math.isfinite(summary.item()) if summary.numel() == 1 else bool(torch.isfinite(summary).all())):
        _search_finite(preds, target)


def _search_finite(preds: Tensor, target: Tensor) -> None:
    finite("preds", preds)
    finite("target", target)


# At run time the op is require_finite itself, then not tracing. Declared as writing ``summary``
# (it does not): an op with no output and no write would be dropped from the graph as dead code,
# and the state's update reads ``summary`` after it.
_require_finite_op = define_op("require_finite", "Tensor(a!) summary, Tensor preds, Tensor target", require_finite)


def pair(preds: object, target: object, device: Optional[torch.device] = None) -> Tuple[Tensor, Tensor]:
    """Checked preds and target: real tensors of one shape, on one device (values: see
    ``require_finite``)."""
    preds, target = real("preds", preds, device), real("target", target, device)
    if target.device != preds.device:
        raise ValueError(f"target: expected a tensor on {preds.device} (the device of preds), got {target.device}")
    if target.shape != preds.shape:
        raise InputShapeError(
            f"target: expected the shape of preds {list(preds.shape)}, got {list(target.shape)} "
            "(Predictions and targets are expected to have the same shape)"
        )
    return preds, target


def flat(preds: object, target: object, device: Optional[torch.device] = None) -> Tuple[Tensor, Tensor]:
    """preds and target of one shape (any rank), flattened to [N]."""
    preds, target = pair(preds, target, device)
    return preds.reshape(-1), target.reshape(-1)


def columns(
    preds: object, target: object, num_outputs: int, device: Optional[torch.device] = None
) -> Tuple[Tensor, Tensor]:
    """[N, D] with D = num_outputs > 1 (a 1-D input would be spread over every output)."""
    p, t = pair(preds, target, device)
    if p.dim() != 2 or p.shape[1] != num_outputs:
        raise ValueError(f"preds: expected shape [N, {num_outputs}] (num_outputs={num_outputs}), got {describe(p)}")
    return p, t


def outputs(
    preds: object, target: object, max_dims: Optional[int] = None, device: Optional[torch.device] = None
) -> Tuple[Tensor, Tensor, Tuple[int, ...]]:
    """[N] or [N, d1, ...] (at most ``max_dims`` dims): returned as [N, D] with D = d1 * ...,
    and the output shape (d1, ...), () for a 1-D input."""
    p, t = pair(preds, target, device)
    if p.dim() == 0 or (max_dims is not None and p.dim() > max_dims):
        raise ValueError(
            f"preds: expected shape [N] or [N, D], got {describe(p)} (Expected both prediction and target "
            f"to be 1D or 2D tensors, but received tensors with dimension {p.dim()})"
        )
    shape = tuple(p.shape[1:])
    d = math.prod(shape)
    return p.reshape(p.shape[0], d), t.reshape(t.shape[0], d), shape


def pearson(
    preds: object, target: object, num_outputs: int, device: Optional[torch.device] = None
) -> Tuple[Tensor, Tensor]:
    """[N] or [N, 1] for one output, [N, D] for D = num_outputs; returned as [N, D]."""
    p, t = pearson_shaped(preds, target, num_outputs, device)
    return p.reshape(p.shape[0], num_outputs), t.reshape(t.shape[0], num_outputs)


def pearson_shaped(
    preds: object, target: object, num_outputs: int, device: Optional[torch.device] = None
) -> Tuple[Tensor, Tensor]:
    """``pearson``'s checks, the tensors returned in their own shape ([N] or [N, D])."""
    p, t = pair(preds, target, device)
    if p.dim() not in (1, 2):
        raise ValueError(
            f"preds: expected shape [N] or [N, {num_outputs}], got {describe(p)} (Expected both predictions "
            "and target to be either 1- or 2-dimensional tensors)"
        )
    if (p.dim() == 2 and p.shape[1] != num_outputs) or (p.dim() == 1 and num_outputs != 1):
        want = "[N] or [N, 1]" if num_outputs == 1 else f"[N, {num_outputs}]"
        hint = f"; for {p.shape[1]} outputs pass num_outputs={p.shape[1]}" if p.dim() == 2 else ""
        raise ValueError(
            f"preds: expected shape {want} (num_outputs={num_outputs}), got {describe(p)}{hint} "
            "(Expected argument `num_outputs` to match the second dimension of input)"
        )
    return p, t


def rows(preds: object, target: object, device: Optional[torch.device] = None) -> Tuple[Tensor, Tensor]:
    """Vectors, one per row: [N, d] each, same shape."""
    p, t = pair(preds, target, device)
    if p.dim() != 2:
        raise ValueError(
            f"preds: expected shape [N, d] (one vector per row), got {describe(p)} (Expected input to cosine "
            "similarity to be 2D tensors of shape `[N,D]`)"
        )
    return p, t


def as_float(t: Tensor) -> Tensor:
    """Floating tensors as they are (the kernels read any float dtype), integers as float64."""
    return t if t.is_floating_point() else t.to(_F64)


# -- result dtypes ---------------------------------------------------------------------------------

# A float input dtype as a small int for an int64 state (0: integer inputs, no float dtype).
# The order is torch's promotion order except float16 vs bfloat16 (which promote to float32).
FLOAT_CODES = {torch.float16: 1, torch.bfloat16: 2, torch.float32: 3, torch.float64: 4}
CODE_DTYPES = {code: dtype for dtype, code in FLOAT_CODES.items()}


def float_code(*tensors: Tensor) -> int:
    """The promoted float dtype of the inputs, as a FLOAT_CODES code (0 when all are integer):
    torch's promotion, so float16 with bfloat16 is float32."""
    dtype = tensors[0].dtype
    for t in tensors[1:]:
        dtype = torch.promote_types(dtype, t.dtype)
    return FLOAT_CODES.get(dtype, 0)


def promoted(dtype: torch.dtype, code: int) -> torch.dtype:
    """``dtype`` promoted with the input float dtype ``code`` stands for."""
    return dtype if code == 0 else torch.promote_types(dtype, CODE_DTYPES[code])


def functional_dtype(preds: Tensor, target: Tensor) -> torch.dtype:
    """The dtype torchmetrics' functional forms return: the inputs' promoted float dtype, or
    torch's default dtype for integer inputs."""
    dtype = torch.promote_types(preds.dtype, target.dtype)
    return dtype if dtype.is_floating_point else torch.get_default_dtype()


# |target| is clamped to this before dividing, as torchmetrics does (so a target of 0 gives a
# huge term, not inf; scikit-learn clamps at float64's eps, 2.2e-16, instead).
MAPE_EPS = 1.17e-06


# -- error sums ------------------------------------------------------------------------------


def squared_error_sum(
    preds: Tensor, target: Tensor, num_outputs: int, device: Optional[torch.device] = None
) -> Tuple[Tensor, int]:
    """(sum of squared errors [D] float64, number of samples) of one batch."""
    p, t = error_inputs(preds, target, num_outputs, device)
    diff = t.to(_F64) - p  # p promotes to float64 exactly, inside the subtraction
    total = (diff * diff).sum(0)
    require_finite(total, p, t)
    return total, diff.shape[0]


def absolute_error_sum(
    preds: Tensor, target: Tensor, num_outputs: int, device: Optional[torch.device] = None
) -> Tuple[Tensor, int]:
    """(sum of absolute errors [D] float64, number of samples) of one batch."""
    p, t = error_inputs(preds, target, num_outputs, device)
    total = (t.to(_F64) - p).abs().sum(0)
    require_finite(total, p, t)
    return total, p.shape[0]


def absolute_percentage_error_sum(
    preds: Tensor, target: Tensor, device: Optional[torch.device] = None
) -> Tuple[Tensor, int]:
    """(sum of |target - preds| / max(|target|, MAPE_EPS) float64, number of elements)."""
    p, t = flat(preds, target, device)
    t64 = t.to(_F64)
    total = ((t64 - p.to(_F64)).abs() / t64.abs().clamp_min(MAPE_EPS)).sum()
    require_finite(total, p, t)
    return total, p.numel()


def error_inputs(preds, target, num_outputs, device):
    """num_outputs = 1: any shape, flattened; else [N, D]. Returned as [N, D]."""
    if num_outputs == 1:
        p, t = pair(preds, target, device)
        return p.reshape(-1, 1), t.reshape(-1, 1)  # one view each (flat's [N] then [:, None] makes two)
    return columns(preds, target, num_outputs, device)


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
    fused = _fused_residual_moments(state, p, t)
    if fused is not None:
        return fused
    residual = t.to(_F64) - p.to(_F64)
    require_finite(residual.sum(), p, t)  # NaN or inf in preds or target makes a residual so
    if state.shape[0] == 0:
        state = empty_moments(2 * d, state.device)
    # Two kernel calls write one state: every argument is checked above, and the call that reads
    # the caller's tensor goes first, so that nothing is written if a kernel still refuses it.
    # The second reads only the residuals made here (float64, contiguous, finite).
    kernels.moments_update(state[d:], deferred_checks.cleaned(as_float(t)), None)
    kernels.moments_update(state[:d], deferred_checks.cleaned(residual), None)
    return state


def _widened(t: Tensor) -> Tensor:
    """float32 / float64 as they are; half floats as float32 and integers as float64 (exact, and
    one vectorised torch pass beats the kernel's element-by-element loads of those dtypes)."""
    if t.dtype in (torch.float32, _F64):
        return t
    return t.float() if t.is_floating_point() else t.to(_F64)


def _fused_residual_moments(state: Tensor, p: Tensor, t: Tensor) -> Optional[Tensor]:
    """The state after the residual-moments kernel (csrc/API_REGRESSION.md) folded in a CPU batch
    in one read of p and t, or None when the torch path must: not on the CPU (there the checks
    stay on the device), under dynamo, or a batch the kernel refused (a NaN / inf: the torch path
    then raises naming ``preds`` / ``target``; nothing was written)."""
    if not p.is_cpu or compiling():
        return None
    out = empty_moments(2 * p.shape[1], state.device) if state.shape[0] == 0 else state
    try:
        regression_kernels.residual_moments(out, _widened(p), _widened(t))
    except (TypeError, ValueError):
        return None
    return out


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


def comoments_update(state: Tensor, p: Tensor, t: Tensor) -> None:
    """Fold a checked batch [N, D] into a co-moments state [D, 6] of (preds, target), in place."""
    p, t = as_float(p), as_float(t)
    require_finite(p.sum() + t.sum(), p, t)
    kernels.comoments_update(state, deferred_checks.cleaned(p), deferred_checks.cleaned(t))


# -- cosine similarity -----------------------------------------------------------------------

COSINE_REDUCTIONS = ("sum", "mean", "none", None)


def check_cosine_reduction(reduction: object) -> Optional[str]:
    if reduction not in COSINE_REDUCTIONS:
        raise ValueError(f"reduction: expected one of {COSINE_REDUCTIONS}, got {reduction!r}")
    return reduction


def cosine_rows(preds: Tensor, target: Tensor, device: Optional[torch.device] = None) -> Tensor:
    """The cosine similarity of each row pair, float64 [N]; a zero-norm row gives NaN (0 / 0)."""
    p, t = rows(preds, target, device)
    p64, t64 = p.to(_F64), t.to(_F64)
    norms = torch.linalg.vector_norm(p64, dim=1) * torch.linalg.vector_norm(t64, dim=1)
    require_finite(norms.sum(), p, t)
    return (p64 * t64).sum(1) / norms
