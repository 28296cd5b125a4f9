"""Regression inputs: option checks and the shapes and values preds/target may take.

Every check runs before any state is touched and raises with the argument's name, what was
expected and what arrived: TypeError for a wrong type or dtype, ValueError for a wrong shape,
device or value.

* dtypes: floating or integer tensors (not bool, not complex); integers are read as float64.
* values: finite only. NaN or +-inf in preds or target is a ValueError naming the first bad
  element (a NaN would silently poison every later result of a streaming metric).
* shapes, by metric: ``flat`` (same shape, any rank, flattened into samples), ``columns``
  ([N] or [N, 1] for one output, [N, D] for D = num_outputs) and ``rows`` ([N, d] vectors).
"""
from typing import Optional, Tuple

import torch
from torch import Tensor

from ._reference_checks import describe

MULTIOUTPUTS = ("raw_values", "uniform_average", "variance_weighted")
_F64 = torch.float64


def check_num_outputs(num_outputs: object) -> int:
    if not isinstance(num_outputs, int) or isinstance(num_outputs, bool) or num_outputs < 1:
        raise ValueError(f"num_outputs: expected an int >= 1, got {num_outputs!r}")
    return num_outputs


def check_multioutput(multioutput: object) -> str:
    if multioutput not in MULTIOUTPUTS:
        raise ValueError(f"multioutput: expected one of {MULTIOUTPUTS}, got {multioutput!r}")
    return multioutput  # type: ignore[return-value]


def check_adjusted(adjusted: object) -> int:
    if not isinstance(adjusted, int) or isinstance(adjusted, bool) or adjusted < 0:
        raise ValueError(f"adjusted: expected an int >= 0 (the number of regressors), got {adjusted!r}")
    return adjusted


def real(name: str, t: object, device: Optional[torch.device] = None) -> Tensor:
    """A floating or integer tensor, on ``device`` when given."""
    if not isinstance(t, Tensor):
        raise TypeError(f"{name}: expected a tensor, got {type(t).__name__}")
    if t.dtype == torch.bool or t.is_complex() or not (t.is_floating_point() or _is_integer(t)):
        raise TypeError(f"{name}: expected a floating or integer tensor, got {describe(t)}")
    if device is not None and t.device != device:
        raise ValueError(f"{name}: expected a tensor on {device} (the metric's device), got {t.device}")
    return t.detach()  # states never join an autograd graph


def _is_integer(t: Tensor) -> bool:
    return t.dtype in (torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64)


def finite(name: str, t: Tensor) -> None:
    """NaN or +-inf anywhere is an error naming the first such element."""
    if not t.is_floating_point() or t.numel() == 0:
        return
    bad = ~torch.isfinite(t)
    if bool(bad.any()):
        flat = int(bad.reshape(-1).nonzero()[0, 0])
        value = float(t.reshape(-1)[flat])
        where = f"index {flat}" if t.dim() <= 1 else f"flat index {flat} of shape {list(t.shape)}"
        raise ValueError(f"{name}: expected finite values, got {value} at {where}")


def _pair(preds: object, target: object, device: Optional[torch.device]) -> Tuple[Tensor, Tensor]:
    preds, target = real("preds", preds, device), real("target", target, device)
    if target.device != preds.device:
        raise ValueError(f"target: expected a tensor on {preds.device} (the device of preds), got {target.device}")
    if target.shape != preds.shape:
        raise ValueError(f"target: expected the shape of preds {list(preds.shape)}, got {list(target.shape)}")
    finite("preds", preds)
    finite("target", target)
    return preds, target


def flat(preds: object, target: object, device: Optional[torch.device] = None) -> Tuple[Tensor, Tensor]:
    """preds and target of one shape (any rank), flattened to [N]."""
    preds, target = _pair(preds, target, device)
    return preds.reshape(-1), target.reshape(-1)


def columns(preds: object, target: object, num_outputs: int,
            device: Optional[torch.device] = None) -> Tuple[Tensor, Tensor]:
    """[N] or [N, 1] for one output, [N, D] for D = num_outputs; returned as [N, D]."""
    p = real("preds", preds, device)
    ok = (p.dim() == 2 and p.shape[1] == num_outputs) or (p.dim() == 1 and num_outputs == 1)
    if not ok:
        want = "[N] or [N, 1]" if num_outputs == 1 else f"[N, {num_outputs}]"
        hint = f"; for {p.shape[1]} outputs pass num_outputs={p.shape[1]}" if p.dim() == 2 else ""
        raise ValueError(f"preds: expected shape {want} (num_outputs={num_outputs}), got {describe(p)}{hint}")
    p, t = _pair(p, target, device)
    return p.reshape(p.shape[0], num_outputs), t.reshape(t.shape[0], num_outputs)


def rows(preds: object, target: object, device: Optional[torch.device] = None) -> Tuple[Tensor, Tensor]:
    """Vectors, one per row: [N, d] each, same shape."""
    p = real("preds", preds, device)
    if p.dim() != 2:
        raise ValueError(f"preds: expected shape [N, d] (one vector per row), got {describe(p)}")
    return _pair(p, target, device)


def as_float(t: Tensor) -> Tensor:
    """Floating tensors as they are (the kernels read any float dtype), integers as float64."""
    return t if t.is_floating_point() else t.to(_F64)
