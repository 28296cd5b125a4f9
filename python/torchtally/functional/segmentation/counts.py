"""Segmentation inputs -> per-sample, per-class overlap counts (the state every overlap metric is made of).

Inputs follow torchmetrics.segmentation's ``input_format``:

    "one-hot"  preds and target [N, C, ...]: 0/1 masks (bool or integer; a class mask per channel,
               masks may overlap) or float scores, reduced to the argmax class of each pixel;
    "index"    preds and target [N, ...]: integer class indices in [0, num_classes);
    "mixed"    one of each: the tensor with one more dim is the one-hot one.

``overlap_counts`` returns int64 [N, C, 3] = (intersection, prediction pixels, target pixels)
per sample and class, counted by torchtally.kernels in one call per batch: index maps (and the
argmax of float scores) by the label-counts kernel, masks by the mask-counts kernel (one pass
over both masks, 8 one-byte pixels at a time). Shape and dtype checks run first and name the
argument (a float index map is a TypeError, shapes that do not match a ValueError); the value
checks (an index outside [0, num_classes), a mask value other than 0/1, NaN scores) are the
kernels', so the update reads no value back to the host: a CPU batch raises at the call. On
CUDA (the kernels of torchtally._C_cuda) they leave a device status instead: ``counted`` gives
the batch's verdict ``ok`` beside the counts, the metrics add only values gated on it
(``gated``), and ``_defer`` hands the verdict with the C core's message to the deferred-check
registry (raised at the next update or compute, with no wait; read back at the call outside a
metric update or in immediate mode).
A NaN among a pixel's scores makes its argmax -1, which the kernel reports as "NaN in the
scores" (the class-argmax kernel makes that map: torch.argmax over the class dim walks the maps
pixel by pixel).
"""

import math
from typing import Callable, List, NamedTuple, Optional, Tuple

import torch
from torch import Tensor

from ... import kernels
from ...kernels import deferred_checks, segmentation_status

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


def _labels(name: str, t: Tensor, num_classes: int, host_checks: bool) -> Tensor:
    """An index map [N, ...], range-checked here with ``host_checks`` (else by the kernel)."""
    if t.dtype not in _LABEL_DTYPES or t.dtype == torch.bool:
        raise TypeError(f"{name}: expected an integer index map for input_format 'index', got {_shape(t)}")
    if host_checks and t.numel():
        low, high = int(t.min()), int(t.max())
        if low < 0 or high >= num_classes:
            bad = low if low < 0 else high
            raise ValueError(f"{name}: class index {bad} is out of range [0, {num_classes})")
    return t


class _Side(NamedTuple):
    kind: str  # "labels" [N, ...] or "masks" [N, C, ...]
    values: Tensor
    scored: bool  # labels that are the argmax of float scores, -1 where a pixel's scores held a NaN


def _one_hot_side(name: str, t: Tensor, num_classes: int, host_checks: bool) -> _Side:
    """Float scores [N, C, ...] as their argmax map, 0/1 masks as they are (their values checked
    here with ``host_checks``, else by the kernel that counts them)."""
    if t.dim() < 2 or t.shape[1] != num_classes:
        raise ValueError(f"{name}: expected one-hot [N, C, ...] with C = num_classes = {num_classes}, got {_shape(t)}")
    if t.is_floating_point():
        if host_checks:
            if bool(torch.isnan(t).any()):
                raise ValueError(f"{name}: NaN in the scores")
            return _Side("labels", t.argmax(dim=1), False)
        return _Side("labels", _class_argmax(t), True)
    if host_checks and t.dtype != torch.bool and t.numel() and (int(t.min()) < 0 or int(t.max()) > 1):
        raise ValueError(f"{name}: expected a one-hot (0/1) mask per class, got values outside {{0, 1}}")
    return _Side("masks", t, False)


def _class_argmax(scores: Tensor) -> Tensor:
    """int64 [N, ...]: the argmax class of each pixel of scores [N, C, ...], -1 at a NaN score."""
    n, c = scores.shape[:2]
    pixels = math.prod(scores.shape[2:])
    out = torch.empty(n, pixels, dtype=torch.int64, device=scores.device)
    kernels.class_argmax(out, scores.reshape(n, c, pixels))
    return out.view(n, *scores.shape[2:])


def _as_masks(side: _Side, num_classes: int) -> Tensor:
    t = side.values
    if side.kind == "masks":
        return t
    classes = torch.arange(num_classes, device=t.device).view(1, num_classes, *([1] * (t.dim() - 1)))
    return t.unsqueeze(1) == classes


def _sides(
    preds: object, target: object, num_classes: Optional[int], input_format: str, host_checks: bool
) -> Tuple[_Side, _Side, int]:
    p, t = _tensor("preds", preds), _tensor("target", target)
    if input_format == "one-hot":
        if p.shape != t.shape:
            raise ValueError(f"preds and target: expected one shape, got {_shape(p)} and {_shape(t)}")
        if p.dim() < 3:
            raise ValueError(f"preds: expected one-hot [N, C, ...] with at least one spatial dim, got {_shape(p)}")
        c = num_classes if num_classes is not None else p.shape[1]
        return _one_hot_side("preds", p, c, host_checks), _one_hot_side("target", t, c, host_checks), c
    if input_format == "index":
        assert num_classes is not None  # the callers' argument checks
        if p.shape != t.shape:
            raise ValueError(f"preds and target: expected one shape, got {_shape(p)} and {_shape(t)}")
        if p.dim() < 2:
            raise ValueError(f"preds: expected an index map [N, ...] with at least one spatial dim, got {_shape(p)}")
        c = num_classes
        p_side = _Side("labels", _labels("preds", p, c, host_checks), False)
        return p_side, _Side("labels", _labels("target", t, c, host_checks), False), c
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
    hot_side = _one_hot_side(hot_name, hot, c, host_checks)
    index_side = _Side("labels", _labels(index_name, index, c, host_checks), False)
    return (hot_side, index_side, c) if hot_first else (index_side, hot_side, c)


def formatted(
    preds: object, target: object, num_classes: Optional[int], input_format: str
) -> Tuple[str, Tensor, Tensor, int]:
    """Both sides checked (values included) and brought to one kind: ("labels", [N, ...] x2, C) or
    ("masks", [N, C, ...] x2, C). ``num_classes`` None takes C from the one-hot tensor
    (input_format "one-hot" or "mixed")."""
    p, t, c = _sides(preds, target, num_classes, input_format, host_checks=True)
    if p.kind == t.kind:
        return p.kind, p.values, t.values, c
    return "masks", _as_masks(p, c), _as_masks(t, c), c


def _rows(t: Tensor) -> Tensor:
    """[N, ...] as [N, P] (a view where the layout allows; not -1: ambiguous for an empty batch)."""
    return t.reshape(t.shape[0], math.prod(t.shape[1:]))


class Counted(NamedTuple):
    counts: Tensor  # int64 [N, C, 3]
    ok: Optional[Tensor]  # CUDA: a device bool, whether the batch passed its value checks; None: checked at the call


def _defer(ok: Tensor, explain: Callable[[], str]) -> None:
    """Where a CUDA batch's device verdict goes. Inside a metric update in deferred mode, to the
    deferred-check registry (kernels.deferred_checks): it undoes a rejected batch on the device
    and raises ``explain()`` at the next update or compute, with no host wait. Elsewhere (a
    functional form, immediate mode) the verdict is read back here (one host synchronisation)
    and a rejected batch raises at its call. The metrics also add only values gated on ``ok``."""
    if deferred_checks.deferring(ok):

        def search() -> None:
            raise ValueError(explain())

        deferred_checks.hold(ok, search, "preds / target")
        return
    if not bool(ok):
        raise ValueError(explain())


def _explain(statuses: List[Tuple[Tensor, Callable[[int], str]]]) -> str:
    """The C core's message of the first rejected call of a batch (in the CPU order of its checks)."""
    for status, message in statuses:
        key = int(status[0])
        if key != segmentation_status.CLEAR:
            return message(key)
    return "the batch was rejected on the device"  # not reached: some status holds a key


def _check_labels(name: str, side: _Side, num_classes: int) -> Optional[Tuple[Tensor, Callable[[int], str]]]:
    """The label kernel's value checks alone (index range, NaN marks) for a side about to be
    expanded into masks: counted into a scratch buffer, the other side a constant 0. On CUDA the
    status and how to explain it."""
    labels = _rows(side.values)
    zeros = torch.zeros((), dtype=torch.uint8, device=labels.device).expand(labels.shape)
    scratch = torch.empty(labels.shape[0], num_classes, 3, dtype=torch.int64, device=labels.device)
    p, t, scored = (labels, zeros, int(side.scored)) if name == "preds" else (zeros, labels, 2 * int(side.scored))
    status = kernels.label_counts_status(scratch, p, t, scored)
    if status is None:
        return None
    return status, lambda key: segmentation_status.label_counts_message(key, p, t, num_classes, scored)


def counted(preds: object, target: object, num_classes: Optional[int], input_format: str) -> Counted:
    """(intersection, prediction pixels, target pixels) per sample and class, int64 [N, C, 3], and on
    CUDA the device verdict of the batch's value checks (see ``Counted``; ``_defer`` has it)."""
    p, t, c = _sides(preds, target, num_classes, input_format, host_checks=False)
    n = p.values.shape[0]
    out = torch.empty(n, c, 3, dtype=torch.int64, device=p.values.device)
    statuses = []
    if p.kind == t.kind == "labels":
        pr, tr, scored = _rows(p.values), _rows(t.values), int(p.scored) + 2 * int(t.scored)
        status = kernels.label_counts_status(out, pr, tr, scored)
        if status is not None:
            statuses.append((status, lambda key: segmentation_status.label_counts_message(key, pr, tr, c, scored)))
    else:
        for name, side in (("preds", p), ("target", t)):
            if side.kind == "labels":
                check = _check_labels(name, side, c)
                if check is not None:
                    statuses.append(check)
        pm, tm = _as_masks(p, c), _as_masks(t, c)
        pixels = math.prod(pm.shape[2:])
        pm, tm = pm.reshape(n, c, pixels), tm.reshape(n, c, pixels)
        status = kernels.mask_counts_status(out, pm, tm)  # checks the 0/1 values too
        if status is not None:
            statuses.append((status, lambda key: segmentation_status.mask_counts_message(key, pm)))
    if not statuses:
        return Counted(out, None)
    ok = torch.stack([s for s, _ in statuses]).eq(segmentation_status.CLEAR).all()
    _defer(ok, lambda: _explain(statuses))
    return Counted(out, ok)


def overlap_counts(preds: object, target: object, num_classes: Optional[int], input_format: str) -> Tensor:
    """int64 [N, C, 3]: (intersection, prediction pixels, target pixels) per sample and class."""
    return counted(preds, target, num_classes, input_format).counts


def gated(value: Tensor, ok: Optional[Tensor]) -> Tensor:
    """``value`` where the batch passed its checks (``ok`` None or true), else zeros: what a metric adds
    to a state, so that a batch rejected on the device leaves the state as it was."""
    return value if ok is None else torch.where(ok, value, torch.zeros_like(value))


def drop_background(counts: Tensor, include_background: bool) -> Tensor:
    """Class 0 left out unless ``include_background`` (or unless it is the only class, as torchmetrics)."""
    return counts if include_background or counts.shape[1] < 2 else counts[:, 1:]
