"""Regression inputs: option checks and the shapes and values preds/target may take.

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
import math
from typing import Optional, Tuple

import torch
from torch import Tensor

from ..kernels.reference.checks import describe

MULTIOUTPUTS = ("raw_values", "uniform_average", "variance_weighted")
_F64 = torch.float64
_INTEGER = (torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64)
# What the moments kernels and torch's float64 arithmetic read: not float8 (torch cannot promote
# it), not uint16-uint64 (not every torch op takes them), not complex, not bool.
_REAL = frozenset((torch.float16, torch.bfloat16, torch.float32, torch.float64) + _INTEGER)


class InputShapeError(ValueError, RuntimeError):
    """preds and target of different shapes: a ValueError (torchtally's rule for bad input)
    and a RuntimeError (what torchmetrics raises there)."""


# -- options -------------------------------------------------------------------------------------


def check_num_outputs(num_outputs: object) -> int:
    if not isinstance(num_outputs, int) or isinstance(num_outputs, bool) or num_outputs < 1:
        raise ValueError(f"num_outputs: expected a positive int, got {num_outputs!r}")
    return num_outputs


def check_multioutput(multioutput: object) -> str:
    if multioutput not in MULTIOUTPUTS:
        raise ValueError(f"multioutput: expected one of {MULTIOUTPUTS}, got {multioutput!r}")
    return multioutput  # type: ignore[return-value]


def check_adjusted(adjusted: object) -> int:
    if not isinstance(adjusted, int) or isinstance(adjusted, bool) or adjusted < 0:
        raise ValueError(f"adjusted: expected an int >= 0 (the number of regressors), got {adjusted!r}")
    return adjusted


def check_squared(squared: object) -> bool:
    if not isinstance(squared, bool):
        raise ValueError(f"squared: Expected argument `squared` to be a boolean (True: MSE, False: RMSE), got {squared!r}")
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
    return t.detach()


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
    overflowed on finite inputs passes: the inputs are searched and nothing is found."""
    if not bool(torch.isfinite(summary).all()):
        finite("preds", preds)
        finite("target", target)


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


def columns(preds: object, target: object, num_outputs: int,
            device: Optional[torch.device] = None) -> Tuple[Tensor, Tensor]:
    """[N, D] with D = num_outputs > 1 (a 1-D input would be spread over every output)."""
    p, t = pair(preds, target, device)
    if p.dim() != 2 or p.shape[1] != num_outputs:
        raise ValueError(f"preds: expected shape [N, {num_outputs}] (num_outputs={num_outputs}), got {describe(p)}")
    return p, t


def outputs(preds: object, target: object, max_dims: Optional[int] = None,
            device: Optional[torch.device] = None) -> Tuple[Tensor, Tensor, Tuple[int, ...]]:
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


def pearson(preds: object, target: object, num_outputs: int,
            device: Optional[torch.device] = None) -> Tuple[Tensor, Tensor]:
    """[N] or [N, 1] for one output, [N, D] for D = num_outputs; returned as [N, D]."""
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
    return p.reshape(p.shape[0], num_outputs), t.reshape(t.shape[0], num_outputs)


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
    """The promoted float dtype of the inputs, as a FLOAT_CODES code (0 when all are integer)."""
    return max(FLOAT_CODES.get(t.dtype, 0) for t in tensors)


def promoted(dtype: torch.dtype, code: int) -> torch.dtype:
    """``dtype`` promoted with the input float dtype ``code`` stands for."""
    return dtype if code == 0 else torch.promote_types(dtype, CODE_DTYPES[code])


def functional_dtype(preds: Tensor, target: Tensor) -> torch.dtype:
    """The dtype torchmetrics' functional forms return: the inputs' promoted float dtype, or
    torch's default dtype for integer inputs."""
    dtype = torch.promote_types(preds.dtype, target.dtype)
    return dtype if dtype.is_floating_point else torch.get_default_dtype()
