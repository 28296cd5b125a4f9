"""Torch reference of the box-overlap kernels (csrc/API.md, "Box overlap").

The values are torchvision's (box_iou, generalized_box_iou, distance_box_iou with its eps 1e-7,
complete_box_iou), from the boxes as given, (x1, y1, x2, y2), step by step in torchvision's order
of operations and precision: float64 when preds or target is float64, else float32, with
torchvision's roundings to the boxes' dtype in IoU and GIoU when both are float16 (bfloat16):

* IoU = inter / union, inter the area of the boxes' intersection, union = area_a + area_b - inter;
* GIoU = IoU - (enclosing - union) / enclosing, enclosing the area of the smallest box holding both;
* DIoU = IoU - d^2 / (c^2 + eps), d the distance of the centres, c the enclosing box's diagonal;
* CIoU = DIoU - alpha v, v = 4 / pi^2 (atan(w_a / h_a) - atan(w_b / h_b))^2,
  alpha = v / (1 - IoU + v + eps).

0 / 0 (boxes of zero area) gives NaN, as torchvision.
"""

import math
from typing import Optional

import torch
from torch import Tensor

from . import checks as chk

KINDS = ("IoU", "GIoU", "DIoU", "CIoU")
EPS = 1e-7
_BOX = "a floating tensor of shape [N, 4]"


def pairwise(p: Tensor, t: Tensor, kind: int) -> Tensor:
    """The [N, M] values of every pair of boxes p [N, 4] and t [M, 4] (checked, of one dtype: the
    values' float32 or float64)."""
    return _values(p[:, None, :], t[None, :, :], kind)


def _values(a: Tensor, b: Tensor, kind: int) -> Tensor:
    """The values of the broadcast pairs of boxes a [..., 4] and b [..., 4]."""
    if kind >= 2:  # distance and complete IoU upcast float16 / bfloat16 boxes first
        a, b = _up(a), _up(b)
    ax1, ay1, ax2, ay2 = a.unbind(-1)
    bx1, by1, bx2, by2 = b.unbind(-1)
    area_a = (_up(ax2) - _up(ax1)) * (_up(ay2) - _up(ay1))
    area_b = (_up(bx2) - _up(bx1)) * (_up(by2) - _up(by1))
    # IoU and GIoU: differences of float16 / bfloat16 coordinates rounded in that dtype
    iw = _up(torch.minimum(ax2, bx2) - torch.maximum(ax1, bx1)).clamp(min=0)
    ih = _up(torch.minimum(ay2, by2) - torch.maximum(ay1, by1)).clamp(min=0)
    inter = iw * ih
    union = area_a + area_b - inter
    iou = inter / union
    if kind == 0:
        return iou
    ew = _up(torch.maximum(ax2, bx2) - torch.minimum(ax1, bx1)).clamp(min=0)
    eh = _up(torch.maximum(ay2, by2) - torch.minimum(ay1, by1)).clamp(min=0)
    if kind == 1:
        enclosing = ew * eh
        return iou - (enclosing - union) / enclosing
    dx = (ax1 + ax2) / 2 - (bx1 + bx2) / 2
    dy = (ay1 + ay2) / 2 - (by1 + by2) / 2
    diou = iou - (dx**2 + dy**2) / (ew**2 + eh**2 + EPS)
    if kind == 2:
        return diou
    d = torch.atan((ax2 - ax1) / (ay2 - ay1)) - torch.atan((bx2 - bx1) / (by2 - by1))
    v = (4 / math.pi**2) * d**2
    return diou - v / (1 - iou + v + EPS) * v


_NARROW = (torch.float16, torch.bfloat16)


def _up(x: Tensor) -> Tensor:
    return x.float() if x.dtype in _NARROW else x


def _work_dtype(preds: Tensor, target: Tensor) -> torch.dtype:
    """float64 when preds or target is float64; float16 (bfloat16) when both are, computed in
    float32 with torchvision's roundings to that dtype; else float32."""
    if preds.dtype == target.dtype and preds.dtype in _NARROW:
        return preds.dtype
    return torch.float64 if torch.float64 in (preds.dtype, target.dtype) else torch.float32


def _kind(kind: object) -> int:
    k = chk.index_value("kind", kind, allow_none=False)
    if k is None or not 0 <= k <= 3:
        raise ValueError(f"kind: expected 0 (IoU), 1 (GIoU), 2 (DIoU) or 3 (CIoU), got {k}")
    return k


def _boxes(name: str, t: object, out: Tensor) -> Tensor:
    t = chk.scores(name, t, out, _BOX, lambda s: len(s) == 2 and s[1] == 4)
    return t


def _where(sizes: Optional[Tensor], col: int, i: int) -> str:
    if sizes is None:
        return f"box {i}"
    b = 0
    counts = sizes[:, col].tolist()
    while b < len(counts) - 1 and i >= counts[b]:
        i -= counts[b]
        b += 1
    return f"image {b}, box {i}"


def _checked(name: str, boxes: Tensor, sizes: Optional[Tensor], col: int, dtype: torch.dtype) -> Tensor:
    """Boxes as dtype (the values' float32 or float64), each finite with x1 <= x2 and y1 <= y2."""
    b = boxes.to(dtype)
    bad = ~(torch.isfinite(b).all(1) & (b[:, 0] <= b[:, 2]) & (b[:, 1] <= b[:, 3]))
    i = chk.first(bad, None)
    if i is not None:
        c = ", ".join(f"{float(v):g}" for v in b[i].tolist())
        raise ValueError(
            f"{name}: {_where(sizes, col, i)} is ({c}): expected finite (x1, y1, x2, y2) with x1 <= x2 and y1 <= y2"
        )
    return b


def box_overlap_matrix(out, preds, target, kind, /) -> None:
    """out [N, M] = the value of every pair (preds[i], target[j]); out [K]: of the pairs (i, i)."""
    chk.no_meta(("preds", preds), ("target", target))
    out = chk.tensor("out", out)
    k = _kind(kind)
    preds, target = _boxes("preds", preds, out), _boxes("target", target, out)
    n, m = preds.shape[0], target.shape[0]
    dtype = torch.float64 if out.dtype == torch.float64 else torch.float32
    expected = f"a {str(dtype)[6:]} tensor of shape [{n}, {m}] or [K] with K <= {min(n, m)}"
    if out.dtype != dtype:
        chk.fail("out", out, expected, False)
    if not ((out.dim() == 2 and tuple(out.shape) == (n, m)) or (out.dim() == 1 and out.shape[0] <= min(n, m))):
        chk.fail("out", out, expected, True)
    chk.output("out", out, dtype, expected, (1, 2))
    work = _work_dtype(preds, target)
    p, t = _checked("preds", preds, None, 0, work), _checked("target", target, None, 1, work)
    if out.dim() == 1:
        kk = out.shape[0]
        out.copy_(_values(p[:kk], t[:kk], k))
    else:
        out.copy_(pairwise(p, t, k))


def box_overlap_sums(out, preds, target, sizes, pred_labels, target_labels, kind, threshold=None, /) -> None:
    """out float64 [T, 2] += (sum, count) of the counted values of each target box (csrc/API.md)."""
    chk.no_meta(("preds", preds), ("target", target), ("sizes", sizes))
    out = chk.tensor("out", out)
    preds, target = _boxes("preds", preds, out), _boxes("target", target, out)
    p_total, t_total = preds.shape[0], target.shape[0]
    out = chk.output("out", out, torch.float64, f"a float64 tensor of shape [{t_total}, 2]", (2,))
    if tuple(out.shape) != (t_total, 2):
        chk.fail("out", out, f"a float64 tensor of shape [{t_total}, 2]", True)
    k = _kind(kind)
    sizes = chk.tensor("sizes", sizes)
    if sizes.dtype != torch.int64 or sizes.dim() != 2 or sizes.shape[1] != 2:
        chk.fail("sizes", sizes, "int64 [B, 2]", sizes.dtype == torch.int64)
    chk.same_device("sizes", sizes, out)
    if (pred_labels is None) != (target_labels is None):
        name = "target_labels" if pred_labels is not None else "pred_labels"
        raise ValueError(f"{name}: expected labels for both preds and target, or None for both")
    labelled = pred_labels is not None
    if labelled:
        pred_labels = chk.labels("pred_labels", pred_labels, out, "labels [P]", lambda s: len(s) == 1)
        target_labels = chk.labels("target_labels", target_labels, out, "labels [T]", lambda s: len(s) == 1)
        if pred_labels.shape[0] != p_total:
            raise ValueError(f"pred_labels: expected {p_total} labels (one a box), got {pred_labels.shape[0]}")
        if target_labels.shape[0] != t_total:
            raise ValueError(f"target_labels: expected {t_total} labels (one a box), got {target_labels.shape[0]}")
    if threshold is not None:
        threshold = chk.float_value("threshold", threshold)
    counts = sizes.tolist()
    total = [0, 0]
    for b, row in enumerate(counts):
        for c in range(2):
            if row[c] < 0 or row[c] > (t_total if c else p_total) - total[c]:
                raise ValueError(
                    f"sizes: expected counts >= 0 whose columns sum to ({p_total}, {t_total}) (the boxes of preds "
                    f"and target), got {row[c]} at image {b}"
                )
            total[c] += row[c]
    if total != [p_total, t_total]:
        raise ValueError(
            f"sizes: expected columns summing to ({p_total}, {t_total}) (the boxes of preds and target), "
            f"got ({total[0]}, {total[1]})"
        )
    work = _work_dtype(preds, target)
    p, t = _checked("preds", preds, sizes, 0, work), _checked("target", target, sizes, 1, work)
    to_float = work != torch.float64
    if threshold is not None and to_float:
        threshold = float(torch.tensor(threshold, dtype=torch.float32))
    none = -2.0 if k == 3 else -1.0
    add = torch.zeros_like(out)
    p0 = t0 = 0
    for b, (n, m) in enumerate(counts):
        if n == 0:
            add[t0 : t0 + m, 1] += 1 if labelled else m
        elif m > 0:
            v = pairwise(p[p0 : p0 + n], t[t0 : t0 + m], k).double()
            keep = v != none
            if threshold is not None:
                keep &= ~(v < threshold)
            if labelled:
                keep &= pred_labels[p0 : p0 + n, None].long() == target_labels[None, t0 : t0 + m].long()
            i = chk.first(keep & torch.isnan(v), None)
            if i is not None:
                raise ValueError(
                    f"preds: image {b}: the {KINDS[k]} of prediction {i // m} and target {i % m} is undefined "
                    "(0 / 0: boxes of zero area, or for CIoU of zero width and height)"
                )
            add[t0 : t0 + m, 0] += torch.where(keep, v, 0).sum(0)
            add[t0 : t0 + m, 1] += keep.sum(0)
        p0, t0 = p0 + n, t0 + m
    out.add_(add)
