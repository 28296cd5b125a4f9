"""Input checks and result dtypes shared by the pixel-wise image metrics (PSNR, PSNR-B, total
variation, spectral angle mapper, ERGAS, image gradients).

Every check raises before anything is written, so a metric whose update calls them first keeps
its state unchanged when an input is refused.

Result dtypes follow torchmetrics, whose results take the dtype of the inputs (or of its
float32 state). A class that must give the inputs' dtype keeps ``dtypes_seen``: an int64 [5]
flag per input kind (integer, float16, bfloat16, float32, float64), reduced by "max" (so
merging is an OR); the result dtype is torch's promotion of the kinds seen.
"""

import math
from typing import Optional, Sequence, Tuple

import torch
from torch import Tensor

from ...errors import ShapeError
from ...kernels.reference.checks import describe

__all__: Sequence[str] = ()

F64 = torch.float64
REDUCTIONS = ("elementwise_mean", "sum", "none", None)
# The input kinds of ``dtypes_seen``; an integer input is kind 0.
KINDS = (torch.int64, torch.float16, torch.bfloat16, torch.float32, torch.float64)
FLOATS = KINDS[1:]  # the floating dtypes the image metrics take (float8 is refused)
_READ_ON_HOST = 16  # results up to this size are checked for NaN in Python
_INTEGER = (torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64)


# an input of the wrong shape (a ValueError and torchmetrics' RuntimeError)
ImageShapeError = ShapeError


def tensor_of(name: str, value: object, *, integers: bool = True) -> Tensor:
    """``value`` as a real tensor (float16/bfloat16/float32/float64, or, with ``integers``,
    uint8/int8/int16/int32/int64 and bool); TypeError otherwise."""
    if not isinstance(value, Tensor):
        raise TypeError(f"{name}: expected a torch.Tensor, got {type(value).__name__}")
    allowed = value.dtype in FLOATS or (integers and (value.dtype in _INTEGER or value.dtype == torch.bool))
    if not allowed:
        kinds = "a real (floating point, integer or bool)" if integers else "a floating point"
        raise TypeError(f"{name}: expected {kinds} tensor, got {value.dtype}")
    if value.is_meta:
        raise ValueError(f"{name}: expected a tensor holding values, got a meta tensor")
    return value


def refuse_non_finite(result: Tensor, **inputs: Tensor) -> None:
    """ValueError naming the first of ``inputs`` that holds NaN or infinity, looked for only when
    ``result`` (computed from them, NaN or infinity propagating) is not finite: the inputs are
    scanned again only then. A non-finite result from finite inputs (a perfect prediction's
    infinite PSNR, a zero mean in ERGAS) is the metric's own value and passes."""
    if result.device.type == "cpu" and result.numel() <= _READ_ON_HOST:
        # a few host values: read in Python (three torch calls cost more than the kernel)
        if all(math.isfinite(v) for v in (result if result.dim() == 1 else result.reshape(-1)).tolist()):
            return
    elif bool(torch.isfinite(result).all()):
        return
    for name, value in inputs.items():
        if value.is_floating_point() and not bool(torch.isfinite(value).all()):
            raise ValueError(f"{name}: expected finite values, got NaN or infinity")


def same_shape(preds: Tensor, target: Tensor) -> None:
    if target.device != preds.device:
        raise ValueError(f"target: expected a tensor on {preds.device} (the device of preds), got {target.device}")
    if preds.shape != target.shape:
        raise ImageShapeError(
            f"target: expected the shape of preds {list(preds.shape)}, got {list(target.shape)} "
            "(Predictions and targets are expected to have the same shape)"
        )


def same_dtype(preds: Tensor, target: Tensor) -> None:
    if preds.dtype != target.dtype:
        raise TypeError(
            f"target: expected the dtype of preds {preds.dtype}, got {target.dtype} "
            "(Expected `preds` and `target` to have the same data type)"
        )


def four_dims(name: str, img: Tensor, what: str = "[N, C, H, W]", note: str = "expected BxCxHxW shape") -> None:
    """ImageShapeError unless ``img`` has 4 dims; ``note``: torchmetrics' words, in brackets."""
    if img.dim() != 4:
        raise ImageShapeError(f"{name}: expected a 4-d tensor {what}, got {describe(img)} ({note})")


def check_reduction(reduction: object, allowed: Tuple[object, ...] = REDUCTIONS) -> Optional[str]:
    if not (reduction is None or isinstance(reduction, str)) or reduction not in allowed:
        raise ValueError(f"reduction: expected one of {allowed}, got {reduction!r} (Expected argument `reduction`)")
    return reduction


def check_positive(name: str, value: object) -> float:
    """A finite real number > 0 (not a bool), as a float."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < float(value) < float("inf"):
        raise ValueError(f"{name}: expected a finite number > 0, got {value!r}")
    return float(value)


def reduce_scores(scores: Tensor, reduction: Optional[str]) -> Tensor:
    """torchmetrics' reduction of a vector of scores: mean, sum, or as it is."""
    if reduction == "elementwise_mean":
        return scores.mean()
    if reduction == "sum":
        return scores.sum()
    return scores


def squeezed(values: Tensor) -> Tensor:
    """A one-element result as a 0-d tensor, as torchmetrics' classes return it."""
    return values.reshape(()) if values.numel() == 1 else values


def float_dtype(*tensors: Tensor) -> torch.dtype:
    """The inputs' promoted dtype, float32 for integer or bool inputs (torchmetrics' cast)."""
    dtype = tensors[0].dtype
    for t in tensors[1:]:
        dtype = torch.promote_types(dtype, t.dtype)
    return dtype if dtype.is_floating_point else torch.float32


# -- dtypes_seen ------------------------------------------------------------------------------


def dtypes_seen_default() -> Tensor:
    return torch.zeros(len(KINDS), dtype=torch.int64)


def note_dtype(flags: Tensor, *tensors: Tensor) -> None:
    """Sets the flag of the inputs' promoted dtype (integers and bool: kind 0), in place."""
    dtype = tensors[0].dtype
    for t in tensors[1:]:
        dtype = torch.promote_types(dtype, t.dtype)
    flags[KINDS.index(dtype) if dtype in KINDS[1:] else 0] = 1


def seen_dtype(flags: Tensor, integer_as: torch.dtype) -> Optional[torch.dtype]:
    """Torch's promotion of the kinds flagged (integer inputs counted as ``integer_as``); None
    when none is."""
    result: Optional[torch.dtype] = None
    for kind, flag in zip(KINDS, flags.tolist()):
        if flag:
            dtype = integer_as if kind == torch.int64 else kind
            result = dtype if result is None else torch.promote_types(result, dtype)
    return result


def result_dtype(
    flags: Tensor, integer_as: torch.dtype, metric_dtype: torch.dtype, initial: torch.dtype
) -> torch.dtype:
    """A class's result dtype where torchmetrics' follows its inputs: the metric's dtype once
    ``set_dtype`` changed it (torchmetrics then casts the kept inputs), else the inputs'
    promoted dtype (the metric's dtype before any input)."""
    if metric_dtype != initial:
        return metric_dtype
    return seen_dtype(flags, integer_as) or metric_dtype


def check_flags(states: dict, name: str = "dtypes_seen") -> None:
    flags = states.get(name)
    if flags is not None and flags.numel() and not bool(((flags == 0) | (flags == 1)).all()):
        raise ValueError(f"'{name}': expected flags of 0 or 1, got {flags.tolist()}")
