"""COCO's accumulate and summary from MeanAveragePrecision's rows (package-internal).

The rows (format: coco_match.py) of every rank, concatenated rank-major, give pycocotools'
``COCOeval.eval`` (``precision`` [T, R, K, A, M], ``recall`` [T, K, A, M], ``scores``) through
the accumulate kernel (csrc/API.md, "COCO accumulate"), then ``COCOeval.stats`` and the dict
torchmetrics' MeanAveragePrecision returns. Area ranges are COCO's four: all, small, medium,
large.
"""

from typing import Dict, List, Optional, Sequence, Tuple

import torch
from torch import Tensor

from ... import kernels

AREAS = ("all", "small", "medium", "large")


def accumulate(
    detections: Tensor,
    groundtruths: Tensor,
    labels: Sequence[int],
    iou_thresholds: Sequence[float],
    rec_thresholds: Sequence[float],
    max_detection_thresholds: Sequence[int],
) -> Tuple[Tensor, Tensor, Tensor]:
    """pycocotools' ``precision`` [T, R, K, 4, M], ``recall`` [T, K, 4, M] and ``scores``
    [T, R, K, 4, M] (float64, on the CPU) for the labels ``labels`` (ascending), from the rows."""
    t, r, k, m = len(iou_thresholds), len(rec_thresholds), len(labels), len(max_detection_thresholds)
    precision = torch.empty(t, r, k, 4 * m, dtype=torch.float64)
    scores = torch.empty_like(precision)
    recall = torch.empty(t, k, 4 * m, dtype=torch.float64)
    kernels.coco_accumulate(
        precision,
        recall,
        scores,
        detections.cpu(),
        groundtruths.cpu(),
        torch.tensor(list(labels), dtype=torch.int64),
        torch.tensor(list(rec_thresholds), dtype=torch.float64),
    )
    return precision.view(t, r, k, 4, m), recall.view(t, k, 4, m), scores.view(t, r, k, 4, m)


def _mean_counted(s: Tensor) -> float:
    """pycocotools' mean of the entries > -1, or -1 when there are none."""
    kept = s[s > -1]
    return float(kept.mean()) if kept.numel() else -1.0


def summarize(
    precision: Tensor,
    recall: Tensor,
    iou_thresholds: Sequence[float],
    max_detection_thresholds: Sequence[int],
    backend: str = "pycocotools",
) -> List[float]:
    """``COCOeval.stats`` (12 values) from ``precision`` / ``recall`` as ``summarize`` forms them.

    pycocotools reads AP over all areas at maxDets == 100 whatever the thresholds are (so -1 when
    100 is not one of them) and every other value at the third maxDets, counting every slot whose
    maxDets equals the one asked; faster_coco_eval reads AP at the last maxDets and the first
    equal slot."""
    ious = torch.tensor(list(iou_thresholds), dtype=torch.float64)
    mdt = list(max_detection_thresholds)

    def slots(max_det: int) -> List[int]:
        found = [i for i, v in enumerate(mdt) if v == max_det]
        return found[:1] if backend == "faster_coco_eval" else found

    def value(ap: bool, area: str = "all", iou: Optional[float] = None, max_det: int = mdt[2]) -> float:
        s = precision if ap else recall
        if iou is not None:
            s = s[ious == iou]
        a, ms = AREAS.index(area), slots(max_det)
        if not ms:
            return -1.0
        s = s[..., a, :][..., ms]
        return _mean_counted(s)

    first = mdt[-1] if backend == "faster_coco_eval" else 100
    return [
        value(True, max_det=first),
        value(True, iou=0.5),
        value(True, iou=0.75),
        value(True, "small"),
        value(True, "medium"),
        value(True, "large"),
        value(False, max_det=mdt[0]),
        value(False, max_det=mdt[1]),
        value(False, max_det=mdt[2]),
        value(False, "small"),
        value(False, "medium"),
        value(False, "large"),
    ]


def stats_dict(stats: Sequence[float], prefix: str, max_detection_thresholds: Sequence[int]) -> Dict[str, Tensor]:
    """torchmetrics' names for the 12 stats, each a float32 tensor of shape [1]."""
    mdt = max_detection_thresholds
    names = ["map", "map_50", "map_75", "map_small", "map_medium", "map_large"]
    names += [f"mar_{mdt[0]}", f"mar_{mdt[1]}", f"mar_{mdt[2]}", "mar_small", "mar_medium", "mar_large"]
    return {prefix + n: torch.tensor([float(v)], dtype=torch.float32) for n, v in zip(names, stats)}


def evaluate_rows(
    detections: Tensor,
    groundtruths: Tensor,
    *,
    labels: Sequence[int],
    class_rows: Optional[Tuple[Tensor, Tensor]],
    classes: Sequence[int],
    empty: bool,
    prefix: str,
    iou_thresholds: Sequence[float],
    rec_thresholds: Sequence[float],
    max_detection_thresholds: Sequence[int],
    class_metrics: bool,
    extended_summary: bool,
    backend: str,
) -> Dict[str, Tensor]:
    """One iou_type's part of torchmetrics' result from its rows.

    ``labels``: the categories of the main evaluation ([0] under average="micro", whose rows
    carry label 0; else ``classes``). ``class_rows``: the per-label rows under micro with
    class_metrics (None: ``detections`` / ``groundtruths`` are per label already). ``empty``:
    torchmetrics found no image to evaluate (every stat -1, no per-class or extended keys)."""
    mdt = list(max_detection_thresholds)
    if empty:
        return stats_dict([-1.0] * 12, prefix, mdt)
    precision, recall, scores = accumulate(
        detections, groundtruths, labels, iou_thresholds, rec_thresholds, max_detection_thresholds
    )
    result = stats_dict(summarize(precision, recall, iou_thresholds, mdt, backend), prefix, mdt)
    if extended_summary:
        result[f"{prefix}precision"] = precision
        result[f"{prefix}recall"] = recall
        result[f"{prefix}scores"] = scores
    if class_metrics:
        if class_rows is not None or list(labels) != list(classes):
            rows = class_rows if class_rows is not None else (detections, groundtruths)
            precision, recall, _ = accumulate(
                rows[0], rows[1], classes, iou_thresholds, rec_thresholds, max_detection_thresholds
            )
        per_class = [
            summarize(precision[:, :, k : k + 1], recall[:, k : k + 1], iou_thresholds, mdt, backend)
            for k in range(len(classes))
        ]
        map_per_class = torch.tensor([s[0] for s in per_class], dtype=torch.float32)
        mar_per_class = torch.tensor([s[8] for s in per_class], dtype=torch.float32)
    else:
        map_per_class = mar_per_class = torch.tensor([-1.0], dtype=torch.float32)
    result[f"{prefix}map_per_class"] = map_per_class
    result[f"{prefix}mar_{mdt[-1]}_per_class"] = mar_per_class
    return result
