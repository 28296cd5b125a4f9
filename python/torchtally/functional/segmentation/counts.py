"""Segmentation inputs -> per-sample, per-class overlap counts (the state every overlap metric is made of).

Inputs follow torchmetrics.segmentation's ``input_format``:

    "one-hot"  preds and target [N, C, ...]: 0/1 masks (bool or integer; a class mask per channel,
               masks may overlap) or float scores, reduced to the argmax class of each pixel;
    "index"    preds and target [N, ...]: integer class indices in [0, num_classes);
    "mixed"    one of each: the tensor with one more dim is the one-hot one.

``overlap_counts`` returns int64 [N, C, 3] = (intersection, prediction pixels, target pixels)
per sample and class, counted by torchtally.kernels: index maps by one [C, C] confusion matrix
per sample, masks by the mask-counts kernel (one pass over both masks, 8 one-byte pixels at a
time, checking their 0/1 values as it counts).
Every check runs before anything is counted and names the argument: a float index map is a
TypeError; an index outside [0, num_classes), a mask value other than 0/1, NaN scores or
shapes that do not match are ValueErrors.
"""

import math
from typing import Optional, Tuple

import torch
from torch import Tensor

from ... import kernels

INPUT_FORMATS = ("one-hot", "index", "mixed")

_LABEL_DTYPES = (torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64)
_SCORE_DTYPES = (torch.float16, torch.bfloat16, torch.float32, torch.float64)


def check_input_format(input_format: object) -> str:
    if input_format not in INPUT_FORMATS:
        raise ValueError(f"input_format: expected one of {INPUT_FORMATS}, got {input_format!r}")
    return str(input_format)


def check_bool(name: str, value: object) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"{name}: expected a bool, got {value!r}")
    return value


def check_optional_num_classes(num_classes: object, optional: bool) -> Optional[int]:
    """None where ``optional`` allows it (one-hot inputs give C), else a positive int."""
    if num_classes is None and not optional:
        raise ValueError("Argument `num_classes` must be provided when `input_format` is 'index'.")
    return None if num_classes is None else check_num_classes(num_classes)


def check_num_classes(num_classes: object) -> int:
    if isinstance(num_classes, bool) or not isinstance(num_classes, int) or num_classes <= 0:
        raise ValueError(f"num_classes: expected a positive int, got {num_classes!r}")
    return num_classes


def _shape(t: Tensor) -> str:
    return f"{str(t.dtype).replace('torch.', '')} {list(t.shape)}"


def _tensor(name: str, value: object) -> Tensor:
    if not isinstance(value, Tensor):
        raise TypeError(f"{name}: expected a torch.Tensor, got {type(value).__name__}")
    if value.is_meta:
        raise ValueError(f"{name}: a meta tensor holds no values to count")
    if value.dtype not in _LABEL_DTYPES + _SCORE_DTYPES:
        raise TypeError(f"{name}: expected an integer, bool or float tensor, got {_shape(value)}")
    return value


def _labels(name: str, t: Tensor, num_classes: int) -> Tensor:
    """An index map [N, ...], range-checked."""
    if t.dtype not in _LABEL_DTYPES or t.dtype == torch.bool:
        raise TypeError(f"{name}: expected an integer index map for input_format 'index', got {_shape(t)}")
    if t.numel():
        low, high = int(t.min()), int(t.max())
        if low < 0 or high >= num_classes:
            bad = low if low < 0 else high
            raise ValueError(f"{name}: class index {bad} is out of range [0, {num_classes})")
    return t


def _one_hot_side(name: str, t: Tensor, num_classes: int, check_masks: bool) -> Tuple[str, Tensor]:
    """("labels", argmax map) for float scores [N, C, ...], ("masks", t) for 0/1 masks (values checked
    unless ``check_masks`` is False: the mask-counts kernel checks them as it counts)."""
    if t.dim() < 2 or t.shape[1] != num_classes:
        raise ValueError(f"{name}: expected one-hot [N, C, ...] with C = num_classes = {num_classes}, got {_shape(t)}")
    if t.is_floating_point():
        if bool(torch.isnan(t).any()):
            raise ValueError(f"{name}: NaN in the scores")
        return "labels", t.argmax(dim=1)
    if check_masks and t.dtype != torch.bool and t.numel() and (int(t.min()) < 0 or int(t.max()) > 1):
        raise ValueError(f"{name}: expected a one-hot (0/1) mask per class, got values outside {{0, 1}}")
    return "masks", t


def _as_masks(kind: str, t: Tensor, num_classes: int) -> Tensor:
    if kind == "masks":
        return t
    classes = torch.arange(num_classes, device=t.device).view(1, num_classes, *([1] * (t.dim() - 1)))
    return t.unsqueeze(1) == classes


def formatted(
    preds: object, target: object, num_classes: Optional[int], input_format: str, check_masks: bool = True
) -> Tuple[str, Tensor, Tensor, int]:
    """Both sides checked and brought to one kind: ("labels", [N, ...] x2, C) or ("masks", [N, C, ...] x2, C).

    ``num_classes`` None takes C from the one-hot tensor (input_format "one-hot" or "mixed").
    ``check_masks`` False leaves the 0/1 check of integer masks to the caller's kernel."""
    p, t = _tensor("preds", preds), _tensor("target", target)
    if input_format == "one-hot":
        if p.shape != t.shape:
            raise ValueError(f"preds and target: expected one shape, got {_shape(p)} and {_shape(t)}")
        if p.dim() < 3:
            raise ValueError(f"preds: expected one-hot [N, C, ...] with at least one spatial dim, got {_shape(p)}")
        c = num_classes if num_classes is not None else p.shape[1]
        sides = [_one_hot_side("preds", p, c, check_masks), _one_hot_side("target", t, c, check_masks)]
    elif input_format == "index":
        assert num_classes is not None  # the callers' argument checks
        if p.shape != t.shape:
            raise ValueError(f"preds and target: expected one shape, got {_shape(p)} and {_shape(t)}")
        if p.dim() < 2:
            raise ValueError(f"preds: expected an index map [N, ...] with at least one spatial dim, got {_shape(p)}")
        c = num_classes
        sides = [("labels", _labels("preds", p, c)), ("labels", _labels("target", t, c))]
    else:
        hot_first = p.dim() == t.dim() + 1
        if not hot_first and t.dim() != p.dim() + 1:
            raise ValueError(
                "preds and target: input_format 'mixed' expects one one-hot [N, C, ...] and one index map "
                f"[N, ...] (one dim less), got {_shape(p)} and {_shape(t)}"
            )
        hot, index = (p, t) if hot_first else (t, p)
        if hot.dim() < 3 or hot.shape[0] != index.shape[0] or hot.shape[2:] != index.shape[1:]:
            raise ValueError(
                f"preds and target: expected one-hot [N, C, ...] and index map [N, ...] of the same N and "
                f"spatial dims, got {_shape(p)} and {_shape(t)}"
            )
        c = num_classes if num_classes is not None else hot.shape[1]
        hot_name, index_name = ("preds", "target") if hot_first else ("target", "preds")
        hot_side = _one_hot_side(hot_name, hot, c, check_masks)
        index_side = ("labels", _labels(index_name, index, c))
        sides = [hot_side, index_side] if hot_first else [index_side, hot_side]
    if sides[0][0] == sides[1][0]:
        return sides[0][0], sides[0][1], sides[1][1], c
    return "masks", _as_masks(*sides[0], c), _as_masks(*sides[1], c), c


def overlap_counts(preds: object, target: object, num_classes: Optional[int], input_format: str) -> Tensor:
    """int64 [N, C, 3]: (intersection, prediction pixels, target pixels) per sample and class."""
    kind, p, t, c = formatted(preds, target, num_classes, input_format, check_masks=False)
    n = p.shape[0]
    if kind == "labels":
        confmats = torch.zeros(n, c, c, dtype=torch.int64, device=p.device)
        for i in range(n):  # one [C, C] matrix per sample (row = target, column = prediction)
            kernels.confmat_labels(confmats[i], p[i].reshape(-1), t[i].reshape(-1))
        kernels.settled(confmats)
        return torch.stack(
            (confmats.diagonal(dim1=1, dim2=2), confmats.sum(dim=1), confmats.sum(dim=2)), dim=-1
        ).contiguous()
    out = torch.empty(n, c, 3, dtype=torch.int64, device=p.device)
    pixels = math.prod(p.shape[2:])  # (not -1: ambiguous for an empty batch)
    kernels.mask_counts(out, p.reshape(n, c, pixels), t.reshape(n, c, pixels))  # checks the 0/1 values too
    return out


def drop_background(counts: Tensor, include_background: bool) -> Tensor:
    """Class 0 left out unless ``include_background`` (or unless it is the only class, as torchmetrics)."""
    return counts if include_background or counts.shape[1] < 2 else counts[:, 1:]
