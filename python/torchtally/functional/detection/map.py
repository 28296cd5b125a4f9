"""Mean average precision (COCO): the options, one batch's rows and the result from the rows.

The class (detection/mean_ap.py) keeps the rows as "cat" states; ``mean_average_precision`` runs
the same two steps on one call's lists.
"""

import warnings
from typing import Any, Dict, List, Literal, NamedTuple, Optional, Sequence, Tuple, Union

import torch
from torch import Tensor

from . import coco_accumulate as acc
from .boxes import BOX_FORMATS, IOU_TYPES
from .coco_inputs import check_structure, without_empty_masks
from .coco_match import match_details
from .coco_order import interleaved, iou_dict, permute_segments

__all__ = ["mean_average_precision"]

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
        if box_format not in BOX_FORMATS:
            raise ValueError(f"Expected argument `box_format` to be one of {BOX_FORMATS} but got {box_format!r}")
        types = (iou_type,) if isinstance(iou_type, str) else iou_type
        if not isinstance(types, tuple) or not types or any(t not in IOU_TYPES for t in types):
            raise ValueError(
                f"Expected argument `iou_type` to be one of {IOU_TYPES} or a tuple of, but got {iou_type!r}"
            )
        self.box_format: str = box_format
        self.iou_type: Tuple[str, ...] = types
        self.iou_thresholds = _float_list("iou_thresholds", iou_thresholds, torch.linspace(0.5, 0.95, 10).tolist())
        self.rec_thresholds = _float_list("rec_thresholds", rec_thresholds, torch.linspace(0.0, 1.0, 101).tolist())
        mdt = max_detection_thresholds
        if mdt is not None and not isinstance(mdt, list):
            raise ValueError(
                f"Expected argument `max_detection_thresholds` to either be `None` or a list of ints but got {mdt!r}"
            )
        if mdt is not None and len(mdt) != 3:
            raise ValueError(
                "When providing a list of max detection thresholds it should have length 3. "
                f"Got value {len(mdt)} (max_detection_thresholds={mdt!r})"
            )
        mdt = mdt or [1, 10, 100]
        if any(isinstance(v, bool) or not isinstance(v, int) or v < 1 for v in mdt):
            raise ValueError(f"Expected argument `max_detection_thresholds` to hold positive ints, got {mdt!r}")
        self.max_detection_thresholds: List[int] = sorted(mdt)
        for name, flag in (("class_metrics", class_metrics), ("extended_summary", extended_summary)):
            if not isinstance(flag, bool):
                raise ValueError(f"Expected argument `{name}` to be a boolean, got {flag!r}")
        self.class_metrics: bool = class_metrics
        self.extended_summary: bool = extended_summary
        if average not in ("macro", "micro"):
            raise ValueError(f"Expected argument `average` to be one of ('macro', 'micro') but got {average!r}")
        self.average: str = average
        if backend not in _BACKENDS:
            raise ValueError(f"Expected argument `backend` to be one of {_BACKENDS} but got {backend!r}")
        self.backend: str = backend
        self.iou_tensor = torch.tensor(self.iou_thresholds, dtype=torch.float64)
        self.row_width = 2 + 2 * ((len(self.iou_thresholds) + 9) // 10)

    def row_sets(self) -> Tuple[str, ...]:
        """The row states per iou_type: "" (the main evaluation's) and, under micro with
        class_metrics, "_class" (matched per label, for the per-class values)."""
        return ("", "_class") if self.average == "micro" and self.class_metrics else ("",)

    def row_names(self) -> List[str]:
        """The names of the row states ("<iou_type><set>"), in the order of the per-image columns."""
        return [f"{i_type}{row_set}" for i_type in self.iou_type for row_set in self.row_sets()]

    def image_columns(self) -> int:
        """The int32 columns of the per-image state: rank * 2 + (image has a ground truth), the
        detection rows of each row state, and with extended_summary the IoU matrices per iou_type."""
        return 1 + len(self.row_names()) + (len(self.iou_type) if self.extended_summary else 0)


def _float_list(name: str, values: Any, default: List[float]) -> List[float]:
    if values is not None and not isinstance(values, list):
        raise ValueError(f"Expected argument `{name}` to either be `None` or a list of floats but got {values!r}")
    values = values or default  # an empty list takes the default, as torchmetrics'
    if any(isinstance(v, bool) or not isinstance(v, (int, float)) for v in values):
        raise ValueError(f"Expected argument `{name}` to be a list of floats, got {values!r}")
    return [float(v) for v in values]


class Batch(NamedTuple):
    """One batch's contribution: rows per row state, the distinct labels (int32), the image
    counts (images, with a detection, with a ground truth), the per-image rows (int32, see
    Options.image_columns), the IoU matrices per iou_type with extended_summary (float32 values,
    int32 [P, 3] (label, D, G)), and the first image with more detections than the largest
    max_detection_thresholds (-1: none)."""

    rows: Dict[str, Tuple[Tensor, Tensor]]
    labels: Tensor
    counts: Tensor
    images: Tensor
    ious: Dict[str, Tuple[Tensor, Tensor]]
    crowded: int


def batch_rows(
    preds: Sequence[Dict[str, Tensor]], target: Sequence[Dict[str, Tensor]], opts: Options, rank: int = 0
) -> Batch:
    """One batch, seen by rank ``rank``. The whole batch is checked (torchmetrics' structural
    checks, then the matcher's) before anything is returned."""
    check_structure(preds, target, opts.iou_type)
    preds, target = without_empty_masks(preds), without_empty_masks(target)
    rows: Dict[str, Tuple[Tensor, Tensor]] = {}
    ious: Dict[str, Tuple[Tensor, Tensor]] = {}
    per_image: Dict[str, Tensor] = {}
    for i_type in sorted(opts.iou_type, reverse=True):  # segm first: its mask checks precede _mask_areas
        tgt = _mask_areas(target) if i_type == "bbox" and len(opts.iou_type) > 1 else target
        for row_set in opts.row_sets():
            main = row_set == ""
            found = match_details(
                preds,
                tgt,
                iou_type=i_type,
                box_format=opts.box_format,
                iou_thresholds=opts.iou_tensor,
                max_detection_thresholds=opts.max_detection_thresholds,
                class_agnostic=opts.average == "micro" and main,
                keep_unannotated=len(opts.iou_type) > 1,
                with_ious=opts.extended_summary and main,
            )
            name = f"{i_type}{row_set}"
            rows[name] = (found.detections.to(torch.int32).cpu(), found.groundtruths.to(torch.int32).cpu())
            per_image[name] = found.image_detections
            if found.iou_values is not None and found.iou_index is not None:
                index = found.iou_index
                ious[i_type] = (found.iou_values.float().cpu(), index[:, 1:].to(torch.int32).cpu())
                per_image[f"{i_type}_ious"] = torch.bincount(index[:, 0], minlength=len(preds))
    labels = [item["labels"].reshape(-1).cpu() for item in list(preds) + list(target)]
    seen = torch.cat(labels).unique().to(torch.int32) if labels else torch.empty(0, dtype=torch.int32)
    n_dets = [int(p["labels"].numel()) for p in preds]
    has_gt = torch.tensor([int(t["labels"].numel() > 0) for t in target], dtype=torch.int64)
    counts = torch.tensor([len(preds), sum(n > 0 for n in n_dets), int(has_gt.sum())], dtype=torch.int64)
    columns = [torch.full((len(preds),), 2 * rank, dtype=torch.int64) + has_gt]
    columns += [per_image[name] for name in opts.row_names()]
    if opts.extended_summary:
        columns += [per_image[f"{i_type}_ious"] for i_type in opts.iou_type]
    images = torch.stack(columns, dim=1).to(torch.int32) if preds else torch.zeros(0, len(columns), dtype=torch.int32)
    crowded = next((i for i, n in enumerate(n_dets) if n > opts.max_detection_thresholds[-1]), -1)
    return Batch(rows, seen, counts, images, ious, crowded)


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
    rows: Dict[str, Tuple[Tensor, Tensor]],
    labels_seen: Tensor,
    counts: Sequence[int],
    opts: Options,
    images: Tensor,
    ious: Dict[str, Tuple[Tensor, Tensor]],
) -> Dict[str, Any]:
    """torchmetrics' result dict from all the rows, labels, image counts, per-image rows and IoU
    matrices (every rank's, rank after rank: put in torchmetrics' interleaved image order here)."""
    classes = torch.unique(labels_seen).tolist()
    main_labels = [0] if opts.average == "micro" else classes
    images = images.cpu()
    order = interleaved(torch.div(images[:, 0], 2, rounding_mode="floor"))
    out: Dict[str, Any] = {}
    for i_type in opts.iou_type:
        if opts.iou_type == ("segm",):  # torchmetrics leaves images without masks out
            empty = counts[1] == 0 or counts[2] == 0
        else:
            empty = counts[0] == 0
        ordered = {}
        for row_set in opts.row_sets():
            name = f"{i_type}{row_set}"
            det, gt = rows[name]
            column = images[:, 1 + opts.row_names().index(name)]
            ordered[row_set] = (permute_segments(det.cpu(), column, order), gt)
        prefix = "" if len(opts.iou_type) == 1 else f"{i_type}_"
        out.update(
            acc.evaluate_rows(
                *ordered[""],
                labels=main_labels,
                class_rows=ordered.get("_class"),
                classes=classes,
                empty=empty,
                prefix=prefix,
                iou_thresholds=opts.iou_thresholds,
                rec_thresholds=opts.rec_thresholds,
                max_detection_thresholds=opts.max_detection_thresholds,
                class_metrics=opts.class_metrics,
                extended_summary=opts.extended_summary,
                backend=opts.backend,
            )
        )
        if opts.extended_summary and not empty:
            values, index = ious[i_type]
            per_image = images[:, 1 + len(opts.row_names()) + opts.iou_type.index(i_type)]
            evaluated = (
                images[:, 0] % 2 == 1 if opts.iou_type == ("segm",) else torch.ones_like(per_image, dtype=torch.bool)
            )
            out[f"{prefix}ious"] = iou_dict(values.cpu(), index.cpu(), per_image, order, evaluated, main_labels)
    out["classes"] = torch.tensor(classes, dtype=torch.int32)
    for key, value in out.items():
        if isinstance(value, Tensor) and value.numel() == 1:
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
    ``warn_on_many_detections`` gives torchmetrics' UserWarning for an image with more detections
    than the largest threshold; beyond it, detections are dropped per (image, label) as COCO drops them).

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
    batch = batch_rows(preds, target, opts)
    if batch.crowded >= 0 and warn_on_many_detections:
        warn_many_detections(opts.max_detection_thresholds[-1], batch.crowded)
    return result(batch.rows, batch.labels, batch.counts.tolist(), opts, batch.images, batch.ious)


def warn_many_detections(limit: int, image: int) -> None:
    """torchmetrics' UserWarning for an image with more detections than the largest threshold."""
    warnings.warn(
        f"Encountered more than {limit} detections in a single image (preds[{image}] of this update): the "
        "detections with the lowest scores beyond that many per label are ignored, as COCO ignores them. Raise the "
        "largest of `max_detection_thresholds` to count them, or set the attribute `warn_on_many_detections` to "
        "False after making the metric to silence this warning.",
        UserWarning,
        stacklevel=3,
    )
