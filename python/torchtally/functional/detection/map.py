"""Mean average precision (COCO): the options, one batch's rows and the result from the rows.

The class (metrics/mean_ap.py) keeps the rows as "cat" states; ``mean_average_precision`` runs
the same two steps on one call's lists.
"""

from typing import Any, Dict, List, Literal, Optional, Sequence, Tuple, Union

import torch
from torch import Tensor

from . import coco_accumulate as acc
from .coco_match import match_images

__all__ = ["mean_average_precision"]

_IOU_TYPES = ("bbox", "segm")
_BOX_FORMATS = ("xyxy", "xywh", "cxcywh")
_BACKENDS = ("pycocotools", "faster_coco_eval")


class Options:
    """The checked options of MeanAveragePrecision, with torchmetrics' defaults and errors."""

    def __init__(
        self,
        box_format: Any,
        iou_type: Any,
        iou_thresholds: Any,
        rec_thresholds: Any,
        max_detection_thresholds: Any,
        class_metrics: Any,
        extended_summary: Any,
        average: Any,
        backend: Any,
    ) -> None:
        if box_format not in _BOX_FORMATS:
            raise ValueError(f"box_format: expected one of {_BOX_FORMATS}, got {box_format!r}")
        types = (iou_type,) if isinstance(iou_type, str) else iou_type
        if not isinstance(types, tuple) or not types or any(t not in _IOU_TYPES for t in types):
            raise ValueError(f"iou_type: expected one of {_IOU_TYPES} or a tuple of them, got {iou_type!r}")
        self.box_format: str = box_format
        self.iou_type: Tuple[str, ...] = types
        self.iou_thresholds = _float_list("iou_thresholds", iou_thresholds, torch.linspace(0.5, 0.95, 10).tolist())
        self.rec_thresholds = _float_list("rec_thresholds", rec_thresholds, torch.linspace(0.0, 1.0, 101).tolist())
        mdt = max_detection_thresholds
        if mdt is not None and not isinstance(mdt, list):
            raise ValueError(f"max_detection_thresholds: expected None or a list of ints, got {mdt!r}")
        if mdt is not None and len(mdt) != 3:
            raise ValueError(f"max_detection_thresholds: expected a list of 3 ints, got {len(mdt)} values")
        mdt = mdt or [1, 10, 100]
        if any(isinstance(v, bool) or not isinstance(v, int) or v < 1 for v in mdt):
            raise ValueError(f"max_detection_thresholds: expected positive ints, got {mdt!r}")
        self.max_detection_thresholds: List[int] = sorted(mdt)
        for name, flag in (("class_metrics", class_metrics), ("extended_summary", extended_summary)):
            if not isinstance(flag, bool):
                raise ValueError(f"{name}: expected a bool, got {flag!r}")
        self.class_metrics: bool = class_metrics
        self.extended_summary: bool = extended_summary
        if average not in ("macro", "micro"):
            raise ValueError(f"average: expected 'macro' or 'micro', got {average!r}")
        self.average: str = average
        if backend not in _BACKENDS:
            raise ValueError(f"backend: expected one of {_BACKENDS}, got {backend!r}")
        self.backend: str = backend
        self.iou_tensor = torch.tensor(self.iou_thresholds, dtype=torch.float64)
        self.row_width = 2 + 2 * ((len(self.iou_thresholds) + 9) // 10)

    def row_sets(self) -> Tuple[str, ...]:
        """The row states per iou_type: "" (the main evaluation's) and, under micro with
        class_metrics, "_class" (matched per label, for the per-class values)."""
        return ("", "_class") if self.average == "micro" and self.class_metrics else ("",)


def _float_list(name: str, values: Any, default: List[float]) -> List[float]:
    if values is not None and not isinstance(values, list):
        raise ValueError(f"{name}: expected None or a list of floats, got {values!r}")
    values = values or default  # an empty list takes the default, as torchmetrics'
    if any(isinstance(v, bool) or not isinstance(v, (int, float)) for v in values):
        raise ValueError(f"{name}: expected a list of floats, got {values!r}")
    return [float(v) for v in values]


class Result(dict):
    """The result dict; reading an ``ious`` key explains why it is not there."""

    def __missing__(self, key: Any) -> Any:
        if isinstance(key, str) and key.endswith("ious"):
            raise KeyError(
                f"{key!r}: torchtally's MeanAveragePrecision keeps no boxes or masks after update, so it "
                "cannot return the IoU matrices of extended_summary (precision, recall and scores are there)"
            )
        raise KeyError(key)


def batch_rows(
    preds: Sequence[Dict[str, Tensor]], target: Sequence[Dict[str, Tensor]], opts: Options
) -> Tuple[Dict[str, Tuple[Tensor, Tensor]], Tensor, Tensor]:
    """One batch: the rows per state name ("<iou_type><set>"), the distinct labels (int32) and the
    image counts (images, images with a detection, images with a ground truth). The whole batch
    is checked (by the matcher) before anything is returned."""
    rows: Dict[str, Tuple[Tensor, Tensor]] = {}
    if isinstance(preds, list) and isinstance(target, list) and not preds and not target:
        empty = (torch.zeros(0, opts.row_width, dtype=torch.int32), torch.zeros(0, 2, dtype=torch.int32))
        rows = {f"{i_type}{row_set}": empty for i_type in opts.iou_type for row_set in opts.row_sets()}
        return rows, torch.zeros(0, dtype=torch.int32), torch.zeros(3, dtype=torch.int64)
    for i_type in sorted(opts.iou_type, reverse=True):  # segm first: its mask checks precede _mask_areas
        tgt = _mask_areas(target) if i_type == "bbox" and len(opts.iou_type) > 1 else target
        for row_set in opts.row_sets():
            det, gt = match_images(
                preds,
                tgt,
                iou_type=i_type,
                box_format=opts.box_format,
                iou_thresholds=opts.iou_tensor,
                max_detection_thresholds=opts.max_detection_thresholds,
                class_agnostic=opts.average == "micro" and row_set == "",
            )
            rows[f"{i_type}{row_set}"] = (det.to(torch.int32).cpu(), gt.to(torch.int32).cpu())
    labels = [item["labels"].reshape(-1).cpu() for item in list(preds) + list(target)]
    seen = torch.cat(labels).unique().to(torch.int32) if labels else torch.empty(0, dtype=torch.int32)
    counts = torch.tensor(
        [
            len(preds),
            sum(int(p["labels"].numel() > 0) for p in preds),
            sum(int(t["labels"].numel() > 0) for t in target),
        ],
        dtype=torch.int64,
    )
    return rows, seen, counts


def _mask_areas(target: Sequence[Dict[str, Tensor]]) -> List[Dict[str, Tensor]]:
    """torchmetrics' boxes-and-masks evaluation gives the ground truths their mask areas in the
    bbox pass too (the user's ``area`` where it is > 0): the targets with that ``area``."""
    out = []
    for item in target:
        masks = item["masks"]
        mask_area = (masks != 0).flatten(1).sum(1).double().cpu()
        area = item.get("area")
        if area is not None:
            area = area.double().reshape(-1).cpu()
            area = torch.where(area > 0, area, mask_area)
        else:
            area = mask_area
        kept = {k: v for k, v in item.items() if k != "masks"}
        kept["area"] = area
        out.append(kept)
    return out


def result(
    rows: Dict[str, Tuple[Tensor, Tensor]], labels_seen: Tensor, counts: Sequence[int], opts: Options
) -> Dict[str, Tensor]:
    """torchmetrics' result dict from all the rows (rank-major), labels and image counts."""
    classes = torch.unique(labels_seen).tolist()
    main_labels = [0] if opts.average == "micro" else classes
    out: Dict[str, Tensor] = Result()
    for i_type in opts.iou_type:
        if opts.iou_type == ("segm",):  # torchmetrics leaves images without masks out
            empty = counts[1] == 0 or counts[2] == 0
        else:
            empty = counts[0] == 0
        det, gt = rows[i_type]
        out.update(
            acc.evaluate_rows(
                det,
                gt,
                labels=main_labels,
                class_rows=rows.get(f"{i_type}_class"),
                classes=classes,
                empty=empty,
                prefix="" if len(opts.iou_type) == 1 else f"{i_type}_",
                iou_thresholds=opts.iou_thresholds,
                rec_thresholds=opts.rec_thresholds,
                max_detection_thresholds=opts.max_detection_thresholds,
                class_metrics=opts.class_metrics,
                extended_summary=opts.extended_summary,
                backend=opts.backend,
            )
        )
    out["classes"] = torch.tensor(classes, dtype=torch.int32)
    for key, value in out.items():
        if value.numel() == 1:
            out[key] = value.squeeze()
    return out


def mean_average_precision(
    preds: List[Dict[str, Any]],
    target: List[Dict[str, Any]],
    box_format: Literal["xyxy", "xywh", "cxcywh"] = "xyxy",
    iou_type: Union[Literal["bbox", "segm"], Tuple[Literal["bbox", "segm"], ...]] = "bbox",
    iou_thresholds: Optional[List[float]] = None,
    rec_thresholds: Optional[List[float]] = None,
    max_detection_thresholds: Optional[List[int]] = None,
    class_metrics: bool = False,
    extended_summary: bool = False,
    average: Literal["macro", "micro"] = "macro",
    backend: Literal["pycocotools", "faster_coco_eval"] = "pycocotools",
    warn_on_many_detections: bool = True,
) -> Dict[str, Tensor]:
    """COCO mean average precision and recall of one list of images (see
    torchtally.detection.MeanAveragePrecision for the inputs, the result and the differences from
    torchmetrics; ``max_detection_thresholds`` must hold 3 values here too, and
    ``warn_on_many_detections`` is accepted and unused: detections beyond the largest threshold
    are dropped per (image, label) as COCO drops them).

        >>> import torch
        >>> from torchtally.functional.detection import mean_average_precision
        >>> preds = [{"boxes": torch.tensor([[258.0, 41.0, 606.0, 285.0]]), "scores": torch.tensor([0.536]),
        ...           "labels": torch.tensor([0])}]
        >>> target = [{"boxes": torch.tensor([[214.0, 41.0, 562.0, 285.0]]), "labels": torch.tensor([0])}]
        >>> result = mean_average_precision(preds, target)
        >>> round(result["map"].item(), 4), round(result["map_50"].item(), 4)
        (0.6, 1.0)
    """
    opts = Options(
        box_format,
        iou_type,
        iou_thresholds,
        rec_thresholds,
        max_detection_thresholds,
        class_metrics,
        extended_summary,
        average,
        backend,
    )
    rows, seen, counts = batch_rows(preds, target, opts)
    return result(rows, seen, counts.tolist(), opts)
