"""The IoU family (IoU, generalized, distance and complete IoU): option and input checks, and
the per-batch sums that the metric classes accumulate.

torchmetrics' rule for what a batch contributes, image by image (a list of dicts ``boxes``
[N, 4] and ``labels`` [N] for the predictions, the same for the targets):

* an image with predictions and targets: every (prediction, target) pair's value counts,
  except a pair of different labels (``respect_labels``), a value below ``iou_threshold``, or a
  value equal to torchmetrics' "no value" marker (-1; -2 for CIoU);
* an image without predictions and with M targets counts a 0 for each target (``respect_labels``)
  or M^2 zeros (M for each target) without it; an image with N predictions and no targets counts
  N zeros (N^2 without ``respect_labels``), which belong to no class; the threshold does not
  apply to these zeros (torchmetrics' M x M or N x N matrix of zeros);
* the result is the mean of every counted value of every image (not a mean of per-image means);
  per class, the mean of the counted values in the columns of that class's targets; every label
  seen (in predictions or targets) is a class, 0 where nothing of it counted.

So the state is sums: a float64 sum and an int64 count of the counted values, and for
``class_metrics`` one row per label of a batch: (label, count) int64 and the sum float64
(24 bytes a row, rows of the same label summed at compute).

Every check runs before any state is touched and names the argument: TypeError for a wrong type
or dtype (boxes or labels that are not tensors: torchtally.errors.InputTypeError, also a
ValueError, as torchmetrics raises there), ValueError for a wrong shape, a missing key, a length
that differs or a bad value (NaN or inf, a box with x2 < x1 or y2 < y1 once in (x1, y1, x2,
y2)). Where torchmetrics checks the same thing (preds / target not a list, lengths, keys, box
shapes) the error is its type and starts with its words, so code that catches torchmetrics'
errors keeps working.
"""

import dataclasses
import math
from typing import Any, List, Mapping, Optional, Sequence, Tuple

import torch
from torch import Tensor

from ... import kernels
from ...errors import InputTypeError
from ...kernels.reference.checks import describe
from .boxes import BOX_FORMATS, to_xyxy

KINDS = {"iou": 0, "giou": 1, "diou": 2, "ciou": 3}
_FLOATS = (torch.float16, torch.bfloat16, torch.float32, torch.float64)
_INTEGERS = (torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64)
_F64 = torch.float64


def check_box_format(box_format: object) -> str:
    if box_format not in BOX_FORMATS:
        raise ValueError(f"box_format: expected one of {BOX_FORMATS}, got {box_format!r}")
    return str(box_format)


def check_threshold(name: str, value: object) -> Optional[float]:
    """None, or a real number that is not NaN (an int or float, not a bool)."""
    if value is None:
        return None
    return check_number(name, value)


def check_number(name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{name}: expected a float, got {type(value).__name__}")
    if math.isnan(value):
        raise ValueError(f"{name}: expected a number, got NaN")
    return float(value)


def check_flag(name: str, value: object) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"{name}: expected a bool, got {value!r}")
    return value


def box_tensor(name: str, boxes: object, torchmetrics_says: str = "") -> Tensor:
    """A tensor of boxes [N, 4] (a 1-D empty tensor is read as [0, 4]) of a real dtype. Not a
    tensor: InputTypeError, both a TypeError and torchmetrics' ValueError (its words, when given,
    in parentheses)."""
    if not isinstance(boxes, Tensor):
        says = f" ({torchmetrics_says})" if torchmetrics_says else ""
        raise InputTypeError(f"{name}: expected a tensor of boxes [N, 4], got {type(boxes).__name__}{says}")
    if boxes.dtype not in _FLOATS + _INTEGERS:
        raise TypeError(f"{name}: expected a floating or integer tensor of boxes [N, 4], got {describe(boxes)}")
    if boxes.is_meta:
        raise ValueError(f"{name}: expected a tensor holding values, got a meta tensor {describe(boxes)}")
    if boxes.dim() == 1 and boxes.numel() == 0:
        return boxes.reshape(0, 4)
    if boxes.dim() != 2 or boxes.shape[1] != 4:
        raise ValueError(f"Expected {name} to be of shape [N, 4] (a tensor of boxes), got {describe(boxes)}")
    return boxes


def value_dtype(*boxes: Tensor) -> torch.dtype:
    """What the values are computed in: float64 when a box tensor is float64, else float32 (as
    torchvision, which computes float16 and integer boxes in float32)."""
    return _F64 if any(b.dtype == _F64 for b in boxes) else torch.float32


def box_dtype(*boxes: Tensor) -> torch.dtype:
    """The dtype the boxes go to the kernel in: their own when they share one floating dtype
    (float16 and bfloat16 boxes keep torchvision's roundings in their dtype), else value_dtype."""
    dtypes = {b.dtype for b in boxes}
    if len(dtypes) == 1 and next(iter(dtypes)) in _FLOATS:
        return dtypes.pop()
    return value_dtype(*boxes)


@dataclasses.dataclass
class _Images:
    """One side (predictions or targets) of a batch, its images' tensors checked."""

    boxes: List[Tensor]
    labels: List[Tensor]


def _check_lists(preds: object, target: object) -> None:
    """Both a list of dicts, of one length (torchmetrics' exception type, words and order, so code
    that catches them keeps working)."""
    for name, items in (("preds", preds), ("target", target)):
        if isinstance(items, (str, bytes, Mapping, Tensor)) or not isinstance(items, Sequence):
            raise ValueError(
                f"Expected argument `{name}` to be of type Sequence: a list of dicts (one per image), "
                f"got {type(items).__name__}"
            )
    if len(preds) != len(target):  # type: ignore[arg-type]  # both Sequences: checked above
        raise ValueError(
            "Expected argument `preds` and `target` to have the same length (one dict per image), "
            f"got {len(preds)} and {len(target)}"  # type: ignore[arg-type]
        )


def _read_side(name: str, items: Sequence[Any]) -> _Images:
    side = _Images([], [])
    for i, item in enumerate(items):
        where = f"{name}[{i}]"
        if not isinstance(item, Mapping):
            raise TypeError(f"{where}: expected a dict with 'boxes' and 'labels', got {type(item).__name__}")
        for key in ("boxes", "labels"):
            if key not in item:
                raise ValueError(f"Expected all dicts in `{name}` to contain the `{key}` key ({where} lacks it)")
        boxes = box_tensor(f"{where}['boxes']", item["boxes"], f"Expected all boxes in `{name}` to be of type Tensor")
        labels = item["labels"]
        if not isinstance(labels, Tensor):  # torchmetrics: ValueError
            raise InputTypeError(
                f"{where}['labels']: expected an integer tensor [N], got {type(labels).__name__} "
                f"(Expected all labels in `{name}` to be of type Tensor)"
            )
        if labels.dtype not in _INTEGERS and labels.numel() > 0:  # torch.tensor([]) is float32: no label in it
            raise TypeError(f"{where}['labels']: expected an integer tensor [N], got {describe(labels)}")
        if labels.dim() == 0 or labels.dim() > 1 or labels.shape[0] != boxes.shape[0]:
            raise ValueError(
                f"{where}['labels']: expected {boxes.shape[0]} labels (one per box) in a 1-D tensor, "
                f"got {describe(labels)}"
            )
        if labels.device != boxes.device:
            raise ValueError(
                f"{where}['labels']: expected a tensor on {boxes.device} (as its boxes), got {labels.device}"
            )
        side.boxes.append(boxes)
        side.labels.append(labels)
    return side


@dataclasses.dataclass
class BatchSums:
    """What one batch adds to the state: the sum (float64) and count (int64) of its counted
    values, and per label of the batch (ascending) its count and sum (empty without classes)."""

    total: Tensor
    count: Tensor
    class_rows: Tensor  # int64 [R, 2]: (label, count)
    class_sums: Tensor  # float64 [R]


def batch_sums(
    preds: object,
    target: object,
    kind: str,
    box_format: str,
    iou_threshold: Optional[float],
    respect_labels: bool,
    class_metrics: bool,
) -> BatchSums:
    """The sums of one batch (see the module docstring), every input checked first."""
    _check_lists(preds, target)
    p = _read_side("preds", preds)  # type: ignore[arg-type]  # checked by _check_lists
    t = _read_side("target", target)  # type: ignore[arg-type]
    devices = {x.device for x in p.boxes + t.boxes}
    if len(devices) > 1:
        raise ValueError(f"preds and target: expected every tensor on one device, got {sorted(map(str, devices))}")
    device = devices.pop() if devices else torch.device("cpu")
    dtype = box_dtype(*p.boxes, *t.boxes)
    sizes_list = [(pb.shape[0], tb.shape[0]) for pb, tb in zip(p.boxes, t.boxes)]
    pred_boxes = to_xyxy(_cat(p.boxes, (0, 4), dtype, device), box_format)
    target_boxes = to_xyxy(_cat(t.boxes, (0, 4), dtype, device), box_format)
    pred_labels = _cat(p.labels, (0,), torch.int64, device)
    target_labels = _cat(t.labels, (0,), torch.int64, device)
    sizes = torch.tensor(sizes_list, dtype=torch.int64, device=device).reshape(-1, 2)
    out = torch.zeros(target_boxes.shape[0], 2, dtype=_F64, device=device)
    pl, tl = (pred_labels, target_labels) if respect_labels else (None, None)
    kernels.box_overlap_sums(out, pred_boxes, target_boxes, sizes, pl, tl, KINDS[kind], iou_threshold)
    # an image with predictions and no target: N zeros (N^2 without respect_labels), in no class
    unmatched = sum(n if respect_labels else n * n for n, m in sizes_list if m == 0 and n > 0)
    total = out[:, 0].sum()
    count = out[:, 1].sum().to(torch.int64) + unmatched
    if not class_metrics:
        empty = torch.zeros(0, 2, dtype=torch.int64, device=device)
        return BatchSums(total, count, empty, torch.zeros(0, dtype=_F64, device=device))
    labels, inverse = torch.unique(torch.cat((target_labels, pred_labels)), sorted=True, return_inverse=True)
    columns = inverse[: target_labels.shape[0]]
    class_sums = torch.zeros(labels.shape[0], dtype=_F64, device=device).index_add_(0, columns, out[:, 0])
    class_counts = torch.zeros(labels.shape[0], dtype=_F64, device=device).index_add_(0, columns, out[:, 1])
    return BatchSums(total, count, torch.stack((labels, class_counts.to(torch.int64)), 1), class_sums)


def _cat(tensors: List[Tensor], shape: Tuple[int, ...], dtype: torch.dtype, device: Any) -> Tensor:
    if not tensors:
        return torch.zeros(shape, dtype=dtype, device=device)
    return torch.cat([x.to(dtype) for x in tensors]) if len(tensors) > 1 else tensors[0].to(dtype)
