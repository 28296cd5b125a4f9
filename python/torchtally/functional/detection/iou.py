"""The IoU family's functional forms (torchmetrics.functional.detection's names and
signatures): the value of every pair of boxes, or the mean over the pairs (i, i).

``preds`` [N, 4] and ``target`` [M, 4] hold boxes as (x1, y1, x2, y2). The values are
torchvision's (box_iou, generalized_box_iou, distance_box_iou, complete_box_iou), computed as
torchvision does, step by step in its order and precision (float32; float64 when an input is
float64; float16 / bfloat16 with its roundings in that dtype), so bit for bit its values (CIoU:
see the metric classes' note on the arctangent), by the C core (CPU tensors) or the torch
reference (other devices), and returned in float64 when an input is float64, else float32.
Values below ``iou_threshold`` are replaced by ``replacement_val``. ``aggregate=True`` returns
the mean of the values of the pairs (preds[i], target[i]), i < min(N, M) (the matrix's
diagonal; only those pairs are computed).

As torchmetrics: no predictions (or no targets) give an M x M (N x N) matrix of zeros, float32,
whose mean is 0. A pair of boxes of zero area has NaN (0 / 0, torchvision's value).

Differences from torchmetrics: NaN or inf in a box, a box with x2 < x1 or y2 < y1, or a
non-real dtype is an error naming the argument (torchmetrics returns NaN or negative values);
the aggregate is a float64 mean of the float32 values (torchmetrics: a float32 mean).
"""

from typing import Optional

import torch
from torch import Tensor

from ... import kernels
from .box_overlap_update import KINDS, box_dtype, box_tensor, check_number, check_threshold, value_dtype

__all__ = ["intersection_over_union"]


def overlap(
    kind: str, preds: Tensor, target: Tensor, iou_threshold: Optional[float], replacement_val: float, aggregate: bool
) -> Tensor:
    preds, target = box_tensor("preds", preds), box_tensor("target", target)
    threshold = check_threshold("iou_threshold", iou_threshold)
    replacement = check_number("replacement_val", replacement_val)
    if preds.device != target.device:
        raise ValueError(f"target: expected a tensor on {preds.device} (as preds), got {target.device}")
    if not isinstance(aggregate, bool):
        raise TypeError(f"aggregate: expected a bool, got {type(aggregate).__name__}")
    n, m = preds.shape[0], target.shape[0]
    if n == 0 or m == 0:  # torchmetrics: a square matrix of zeros, as many rows as the other side's boxes
        side = m if n == 0 else n
        zeros = torch.zeros(side, side, dtype=torch.float32, device=preds.device)
        return zeros if not aggregate else torch.zeros((), dtype=torch.float32, device=preds.device)
    dtype = value_dtype(preds, target)
    work = box_dtype(preds, target)
    p, t = preds.to(work), target.to(work)
    out = torch.empty((min(n, m),) if aggregate else (n, m), dtype=dtype, device=preds.device)
    kernels.box_overlap_matrix(out, p, t, KINDS[kind])
    if threshold is not None:
        out = torch.where(out < threshold, torch.tensor(replacement, dtype=dtype, device=out.device), out)
    if not aggregate:
        return out
    return out.double().mean().to(dtype)


def intersection_over_union(
    preds: Tensor,
    target: Tensor,
    iou_threshold: Optional[float] = None,
    replacement_val: float = 0,
    aggregate: bool = True,
) -> Tensor:
    """Intersection over union of boxes ``preds`` [N, 4] and ``target`` [M, 4] (x1, y1, x2, y2):
    the [N, M] matrix (``aggregate=False``) or the mean over the pairs (i, i). See this module's
    docstring for thresholds, empty inputs, dtypes and the differences from torchmetrics.

        >>> import torch
        >>> from torchtally.functional.detection import intersection_over_union
        >>> preds = torch.tensor([[0.0, 0.0, 10.0, 10.0], [5.0, 5.0, 15.0, 15.0]])
        >>> target = torch.tensor([[0.0, 0.0, 10.0, 5.0], [5.0, 5.0, 10.0, 10.0]])
        >>> intersection_over_union(preds, target)
        tensor(0.3750)
        >>> intersection_over_union(preds, target, aggregate=False)
        tensor([[0.5000, 0.2500],
                [0.0000, 0.2500]])
    """
    return overlap("iou", preds, target, iou_threshold, replacement_val, aggregate)
