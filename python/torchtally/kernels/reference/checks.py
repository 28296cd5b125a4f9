"""Argument checks shared by the torch reference kernels (see csrc/API.md).

Every check raises before any output is touched: TypeError for a wrong type or dtype,
ValueError for a wrong shape, device or value. Messages start with the argument's name and
say what was expected and what arrived, as the C core's do.
"""

from typing import Optional, Sequence, Tuple

import torch
from torch import Tensor

LABEL_DTYPES = (torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64)
SCORE_DTYPES = (torch.float16, torch.bfloat16, torch.float32, torch.float64)
MASK_DTYPES = (torch.bool, torch.uint8)


def describe(t: Tensor) -> str:
    """`int64 [32, 7]`: dtype and shape as the error messages print them."""
    return f"{str(t.dtype).replace('torch.', '')} [{', '.join(str(s) for s in t.shape)}]"


def tensor(name: str, t: object) -> Tensor:
    if not isinstance(t, Tensor):
        raise TypeError(f"{name}: expected a tensor, got {type(t).__name__}")
    return t


def no_meta(*named: Tuple[str, object]) -> None:
    """A meta tensor holds no values: ValueError naming the first one among the inputs'
    ``(name, value)`` pairs. An `out` on meta with inputs elsewhere is left to the device
    checks (which name the input). The C core refuses meta inputs too (ValueError: DLPack
    cannot export them)."""
    for name, t in named:
        if isinstance(t, Tensor) and t.is_meta:
            raise ValueError(f"{name}: expected a tensor holding values, got a meta tensor {describe(t)}")


def fail(name: str, t: Tensor, expected: str, shape_wrong: bool) -> None:
    """Raise `name: expected <expected>, got <dtype> [shape]` (ValueError if the shape is the problem)."""
    err = ValueError if shape_wrong else TypeError
    raise err(f"{name}: expected {expected}, got {describe(t)}")


def output(name: str, t: object, dtype: torch.dtype, expected: str, ndims: Sequence[int]) -> Tensor:
    """`out` / `state`: a C-contiguous tensor of `dtype` with one of the given ranks."""
    t = tensor(name, t)
    if t.dtype != dtype:
        fail(name, t, expected, False)
    if t.dim() not in ndims:
        fail(name, t, expected, True)
    if not t.is_contiguous():
        raise ValueError(f"{name}: expected a C-contiguous tensor, got strides {tuple(t.stride())}")
    return t


def same_device(name: str, t: Tensor, out: Tensor) -> None:
    if t.device != out.device:
        raise ValueError(f"{name}: expected a tensor on {out.device} (the device of out), got {t.device}")


def labels(name: str, t: object, out: Tensor, expected: str, shape_ok) -> Tensor:
    """An integer/bool label tensor whose shape satisfies `shape_ok(shape)`."""
    t = tensor(name, t)
    if t.dtype not in LABEL_DTYPES:
        fail(name, t, expected, False)
    if not shape_ok(tuple(t.shape)):
        fail(name, t, expected, True)
    same_device(name, t, out)
    return t


def scores(name: str, t: object, out: Tensor, expected: str, shape_ok) -> Tensor:
    """A floating score tensor whose shape satisfies `shape_ok(shape)`."""
    t = tensor(name, t)
    if t.dtype not in SCORE_DTYPES:
        fail(name, t, expected, False)
    if not shape_ok(tuple(t.shape)):
        fail(name, t, expected, True)
    same_device(name, t, out)
    return t


def mask(t: object, n: int, out: Tensor) -> Optional[Tensor]:
    """None, or a bool/uint8 [N] tensor; returns a bool keep-vector (None: keep all)."""
    if t is None:
        return None
    expected = f"None or a bool or uint8 tensor of shape [N] with N = {n}"
    t = tensor("mask", t)
    if t.dtype not in MASK_DTYPES:
        fail("mask", t, expected, False)
    if tuple(t.shape) != (n,):
        fail("mask", t, expected, True)
    same_device("mask", t, out)
    return t != 0


def index_value(name: str, v: object, allow_none: bool = True) -> Optional[int]:
    """`ignore_index` (None or an int) and `k` (an int): a Python int, not a bool, within int64."""
    if v is None and allow_none:
        return None
    if not isinstance(v, int) or isinstance(v, bool):
        raise TypeError(f"{name}: expected {'None or ' if allow_none else ''}an int, got {type(v).__name__}")
    if not -(2**63) <= v < 2**63:
        raise ValueError(f"{name}: expected an int64, got {v}")
    return v


def float_value(name: str, v: object) -> float:
    """`threshold`: a Python float or int (not a bool), not NaN."""
    if not isinstance(v, (float, int)) or isinstance(v, bool):
        raise TypeError(f"{name}: expected a float, got {type(v).__name__}")
    value = float(v)
    if value != value:
        raise ValueError(f"{name}: expected a number, got NaN")
    return value


def keep_elements(keep_rows: Optional[Tensor], target64: Tensor, ignore_index: Optional[int]) -> Optional[Tensor]:
    """Combine the per-sample mask with `target != ignore_index` (per element of target)."""
    keep = keep_rows
    if keep is not None and target64.dim() == 2:
        keep = keep[:, None].expand_as(target64)
    if ignore_index is not None:
        kept = target64 != ignore_index
        keep = kept if keep is None else keep & kept
    return keep


def where_text(flat: int, shape: Sequence[int]) -> str:
    """`index 3` for a vector, `sample 3, column 1` for a matrix: where the first bad value sits."""
    if len(shape) <= 1:
        return f"index {flat}"
    return f"sample {flat // shape[1]}, column {flat % shape[1]}"


def first(bad: Tensor, keep: Optional[Tensor]) -> Optional[int]:
    """Flat index of the first True in `bad` among kept elements, or None."""
    if keep is not None:
        bad = bad & (keep[:, None] if keep.dim() < bad.dim() else keep)
    if bad.numel() == 0 or not bool(bad.any()):
        return None
    return int(bad.reshape(-1).nonzero()[0, 0])


def label_range(name: str, t64: Tensor, keep: Optional[Tensor], hi: int) -> None:
    """Every kept label must lie in [0, hi)."""
    i = first((t64 < 0) | (t64 >= hi), keep)
    if i is not None:
        label = int(t64.reshape(-1)[i])
        raise ValueError(f"{name}: label {label} at {where_text(i, t64.shape)} is out of range [0, {hi})")


def no_nan(name: str, t: Tensor, where: str = "sample") -> None:
    """NaN anywhere in a score/value input is an error, also in a masked or ignored sample."""
    bad = torch.isnan(t)
    i = first(bad if bad.dim() < 2 else bad.any(dim=1), None)
    if i is not None:
        raise ValueError(f"{name}: NaN at {where} {i}")
