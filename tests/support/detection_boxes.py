"""Random detection batches (lists of per-image dicts of boxes and labels) and a plain torch
oracle of the IoU family's metric classes, written from torchmetrics' documented rule (see
torchtally.functional.detection.box_overlap_update): per image the matrix of pair values, masked
by labels, threshold and the "no value" marker; M x M (N x N) zeros for an image without
predictions (targets), its diagonal kept with respect_labels; the mean of every kept value, and
per class the mean of the kept values in the columns of that class's targets."""

from typing import Dict, List, Optional, Sequence, Tuple

import torch

from torchtally.kernels.reference.box_overlap import pairwise

KIND_NAMES = ("iou", "giou", "diou", "ciou")
Image = Dict[str, torch.Tensor]
Batch = Tuple[List[Image], List[Image]]


def random_boxes(n: int, g: torch.Generator, box_format: str = "xyxy", dtype=torch.float32) -> torch.Tensor:
    """n boxes in ``box_format``: corners in [0, 100), sides in [1, 40)."""
    xy = torch.rand(n, 2, generator=g, dtype=torch.float64) * 100
    wh = torch.rand(n, 2, generator=g, dtype=torch.float64) * 39 + 1
    if box_format == "xyxy":
        b = torch.cat((xy, xy + wh), 1)
    elif box_format == "xywh":
        b = torch.cat((xy, wh), 1)
    else:
        b = torch.cat((xy + wh / 2, wh), 1)
    return b.to(dtype)


def near(boxes: torch.Tensor, g: torch.Generator, box_format: str) -> torch.Tensor:
    """Boxes shifted a little from ``boxes`` (so that pairs overlap), in the same format."""
    shift = torch.rand(boxes.shape, generator=g, dtype=torch.float64) * 6 - 3
    if box_format != "xyxy":
        shift[:, 2:] = shift[:, 2:].abs()  # widths and heights grow
    else:
        shift[:, 2:] = shift[:, :2] + shift[:, 2:].abs()
    return (boxes.double() + shift).to(boxes.dtype)


def random_batches(
    seed: int,
    n_batches: int = 4,
    images: int = 3,
    classes: int = 3,
    box_format: str = "xyxy",
    dtype=torch.float32,
    empty: bool = True,
    lone_preds: bool = True,
) -> List[Batch]:
    """Batches of images with 0-6 targets and 0-8 predictions (some near a target); with ``empty``
    some images have no predictions, no targets, or neither (``lone_preds=False``: no image has
    predictions without targets, which torchmetrics' class_metrics cannot take)."""
    g = torch.Generator().manual_seed(seed)
    batches = []
    for b in range(n_batches):
        preds, target = [], []
        for i in range(images):
            m = int(torch.randint(1, 7, (), generator=g))
            n = int(torch.randint(1, 9, (), generator=g))
            if empty and (b * images + i) % 5 == 1:
                n = 0
            if empty and (b * images + i) % 7 == 2:
                m = 0
            if (empty and (b * images + i) % 11 == 3) or (m == 0 and not lone_preds):
                n = m = 0
            t_boxes = random_boxes(m, g, box_format, dtype)
            t_labels = torch.randint(0, classes, (m,), generator=g)
            p_boxes = random_boxes(n, g, box_format, dtype)
            p_labels = torch.randint(0, classes, (n,), generator=g)
            k = min(n, m)
            if k:
                p_boxes[:k] = near(t_boxes[:k], g, box_format)
                p_labels[:k] = t_labels[:k]
            preds.append({"boxes": p_boxes, "labels": p_labels})
            target.append({"boxes": t_boxes, "labels": t_labels})
        batches.append((preds, target))
    return batches


def xyxy(boxes: torch.Tensor, box_format: str) -> torch.Tensor:
    if box_format == "xyxy":
        return boxes
    a, b, c, d = boxes.unbind(-1)
    if box_format == "xywh":
        return torch.stack((a, b, a + c, b + d), -1)
    return torch.stack((a - 0.5 * c, b - 0.5 * d, a + 0.5 * c, b + 0.5 * d), -1)


def oracle(
    batches: Sequence[Batch],
    kind: int = 0,
    box_format: str = "xyxy",
    iou_threshold: Optional[float] = None,
    class_metrics: bool = False,
    respect_labels: bool = True,
) -> Dict[str, torch.Tensor]:
    """What the metric class of ``kind`` computes over ``batches`` (float64)."""
    name, none = KIND_NAMES[kind], (-2.0 if kind == 3 else -1.0)
    kept: List[torch.Tensor] = []  # per image: the matrix with dropped entries as NaN
    gt_labels: List[torch.Tensor] = []
    labels_seen: List[torch.Tensor] = []
    for preds, target in batches:
        for p, t in zip(preds, target):
            n, m = p["boxes"].shape[0], t["boxes"].shape[0]
            labels_seen += [p["labels"].long(), t["labels"].long()]
            gt_labels.append(t["labels"].long())
            if n == 0 or m == 0:
                side = max(n, m)
                mat = torch.zeros(side, side, dtype=torch.float64)
                keep = torch.eye(side, dtype=torch.bool) if respect_labels else torch.ones(side, side, dtype=torch.bool)
            else:
                f64 = p["boxes"].dtype == torch.float64 or t["boxes"].dtype == torch.float64
                dt = torch.float64 if f64 else torch.float32
                pb, tb = xyxy(p["boxes"].to(dt), box_format), xyxy(t["boxes"].to(dt), box_format)
                mat = pairwise(pb.double(), tb.double(), kind)
                if not f64:
                    mat = mat.float().double()
                keep = mat != none
                if iou_threshold is not None:
                    thr = iou_threshold if f64 else float(torch.tensor(iou_threshold, dtype=torch.float32))
                    keep &= mat >= thr
                if respect_labels:
                    keep &= p["labels"].long()[:, None] == t["labels"].long()[None, :]
            kept.append(torch.where(keep, mat, torch.nan))
    values = torch.cat([k.reshape(-1) for k in kept]) if kept else torch.zeros(0, dtype=torch.float64)
    values = values[~torch.isnan(values)]
    out = {name: values.mean() if values.numel() else torch.tensor(0.0, dtype=torch.float64)}
    if class_metrics and labels_seen:
        for cl in torch.cat(labels_seen).unique().tolist():
            total, count = 0.0, 0
            for mat, gl in zip(kept, gt_labels):
                if gl.numel() == 0:
                    continue  # an image with predictions and no targets: no column (torchmetrics raises)
                col = mat[:, gl == cl]
                col = col[~torch.isnan(col)]
                total, count = total + float(col.sum()), count + col.numel()
            out[f"{name}/cl_{cl}"] = torch.tensor(total / count if count else 0.0, dtype=torch.float64)
    return out
