"""MeanAveragePrecision: COCO's mAP / mAR, matched at update, accumulated at compute.

State: per iou_type, one int32 row per kept detection (16 bytes at up to 10 IoU thresholds:
score bits, label and maxDets level, the outcome at every (IoU threshold, area range) packed
base 3) and one per ground truth (8 bytes: label, area-range mask), both "cat" states; under
average="micro" with class_metrics a second pair, matched per label. Plus the labels seen
(4 bytes per distinct label per update) and three image counts. The math: functional/detection.
"""

from typing import Any, Dict, List, Literal, Optional, Sequence, Tuple, Union

import torch
from torch import Tensor

from ..base.metric import Metric
from ..functional.detection import coco_accumulate as acc
from ..functional.detection.coco_match import match_images

__all__ = ["MeanAveragePrecision"]

_IOU_TYPES = ("bbox", "segm")
_BOX_FORMATS = ("xyxy", "xywh", "cxcywh")
_BACKENDS = ("pycocotools", "faster_coco_eval")


def check_iou_type(iou_type: Any) -> Tuple[str, ...]:
    """torchmetrics' iou_type as a tuple ("bbox" -> ("bbox",)); ValueError for anything else."""
    types = (iou_type,) if isinstance(iou_type, str) else iou_type
    if not isinstance(types, tuple) or not types or any(t not in _IOU_TYPES for t in types):
        raise ValueError(f"iou_type: expected one of {_IOU_TYPES} or a tuple of them, got {iou_type!r}")
    return types


def _float_list(name: str, values: Any, default: List[float]) -> List[float]:
    if values is not None and not isinstance(values, list):
        raise ValueError(f"{name}: expected None or a list of floats, got {values!r}")
    values = values or default  # an empty list takes the default, as torchmetrics'
    if any(isinstance(v, bool) or not isinstance(v, (int, float)) for v in values):
        raise ValueError(f"{name}: expected a list of floats, got {values!r}")
    return [float(v) for v in values]


class _Result(dict):
    """The result dict; reading an ``ious`` key explains why it is not there."""

    def __missing__(self, key: Any) -> Any:
        if isinstance(key, str) and key.endswith("ious"):
            raise KeyError(
                f"{key!r}: torchtally's MeanAveragePrecision keeps no boxes or masks after update, so it "
                "cannot return the IoU matrices of extended_summary (precision, recall and scores are there)"
            )
        raise KeyError(key)


class MeanAveragePrecision(Metric):
    r"""Mean average precision and recall of object detection, COCO's definitions (pycocotools'
    ``COCOeval`` as torchmetrics drives it), for boxes (``iou_type="bbox"``), masks (``"segm"``)
    or both (a tuple: keys get a ``bbox_`` / ``segm_`` prefix).

    ``update(preds, target)`` takes torchmetrics' lists of per-image dicts: preds with
    ``boxes`` [N, 4] (or ``masks`` [N, H, W]), ``scores`` [N] and ``labels`` [N]; target with
    ``boxes`` / ``masks``, ``labels`` and optionally ``iscrowd`` and ``area``. ``compute()`` gives
    ``map``, ``map_50``, ``map_75``, ``map_small`` / ``_medium`` / ``_large``, ``mar_<m>`` for each
    of the three ``max_detection_thresholds``, ``mar_small`` / ``_medium`` / ``_large`` (float32),
    ``map_per_class`` and ``mar_<last>_per_class`` (-1 unless ``class_metrics``) and ``classes``
    (int32); with ``extended_summary`` also ``precision`` [T, R, K, 4, M], ``recall``
    [T, K, 4, M] and ``scores`` (float64, pycocotools' ``COCOeval.eval``). Single-element tensors
    are 0-d, as torchmetrics returns them.

    The matching (COCO's evaluateImg) runs in the update, per image, in C; what is kept is one
    row per detection (16 bytes up to 10 IoU thresholds, 8 more per further 10; detections
    ranked beyond the largest maxDets of their (image, label) are never evaluated by COCO and
    not kept) and one per ground truth (8 bytes), per iou_type, in "cat" states: a sync is one
    padded all_gather of them. Under ``average="micro"`` with ``class_metrics`` both a
    class-agnostic and a per-label pair of row states are kept. Compute sorts each label's rows
    and interpolates the curves in C, exactly as pycocotools' accumulate (same float64
    arithmetic, same tie order; a sync gives every rank the single-process result).

    Differences from torchmetrics:

    * state: compact rows instead of every box, mask and score (torchmetrics keeps the masks
      RLE-encoded and gathers them with pickled objects); results equal pycocotools' to float32
      rounding. Scores are compared as float32 (torchmetrics passes float64 scores on to COCO:
      two float64 scores equal in float32 may order differently);
    * ``extended_summary`` has no ``ious`` (no boxes are kept); reading it raises a KeyError
      that says so;
    * ``backend`` chooses whose summary conventions are followed: ``"pycocotools"`` reads
      ``map`` at maxDets == 100 (-1 when 100 is not a threshold, as pycocotools),
      ``"faster_coco_eval"`` at the last threshold; neither package is needed;
    * bad input (NaN boxes or scores, x2 < x1, labels that are not integers...) raises a
      ValueError naming the image and key, and leaves the state unchanged; thresholds that are
      not numbers, or max detection thresholds below 1, are a ValueError at construction;
    * with several ranks, the images are ordered rank by rank (torchmetrics interleaves them),
      which decides only ties between equal scores.

        >>> import torch
        >>> from torchtally.detection import MeanAveragePrecision
        >>> preds = [{"boxes": torch.tensor([[258.0, 41.0, 606.0, 285.0]]), "scores": torch.tensor([0.536]),
        ...           "labels": torch.tensor([0])}]
        >>> target = [{"boxes": torch.tensor([[214.0, 41.0, 562.0, 285.0]]), "labels": torch.tensor([0])}]
        >>> metric = MeanAveragePrecision()
        >>> metric.update(preds, target)
        >>> result = metric.compute()
        >>> round(result["map"].item(), 4), round(result["map_50"].item(), 4), result["classes"]
        (0.6, 1.0, tensor(0, dtype=torch.int32))
    """

    is_differentiable = False
    higher_is_better = True
    full_state_update = True
    plot_lower_bound = 0.0
    plot_upper_bound = 1.0

    def __init__(
        self,
        box_format: Literal["xyxy", "xywh", "cxcywh"] = "xyxy",
        iou_type: Union[Literal["bbox", "segm"], Tuple[Literal["bbox", "segm"], ...]] = "bbox",
        iou_thresholds: Optional[List[float]] = None,
        rec_thresholds: Optional[List[float]] = None,
        max_detection_thresholds: Optional[List[int]] = None,
        class_metrics: bool = False,
        extended_summary: bool = False,
        average: Literal["macro", "micro"] = "macro",
        backend: Literal["pycocotools", "faster_coco_eval"] = "pycocotools",
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        if box_format not in _BOX_FORMATS:
            raise ValueError(f"box_format: expected one of {_BOX_FORMATS}, got {box_format!r}")
        self.box_format = box_format
        self.iou_type = check_iou_type(iou_type)
        self.iou_thresholds = _float_list(
            "iou_thresholds", iou_thresholds, torch.linspace(0.5, 0.95, 10).tolist()
        )
        self.rec_thresholds = _float_list("rec_thresholds", rec_thresholds, torch.linspace(0.0, 1.0, 101).tolist())
        if max_detection_thresholds is not None and not isinstance(max_detection_thresholds, list):
            raise ValueError(
                f"max_detection_thresholds: expected None or a list of ints, got {max_detection_thresholds!r}"
            )
        if max_detection_thresholds is not None and len(max_detection_thresholds) != 3:
            raise ValueError(
                f"max_detection_thresholds: expected a list of 3 ints, got {len(max_detection_thresholds)} values"
            )
        mdt = max_detection_thresholds or [1, 10, 100]
        if any(isinstance(v, bool) or not isinstance(v, int) or v < 1 for v in mdt):
            raise ValueError(f"max_detection_thresholds: expected positive ints, got {mdt!r}")
        self.max_detection_thresholds: List[int] = sorted(mdt)
        if not isinstance(class_metrics, bool):
            raise ValueError(f"class_metrics: expected a bool, got {class_metrics!r}")
        self.class_metrics = class_metrics
        if not isinstance(extended_summary, bool):
            raise ValueError(f"extended_summary: expected a bool, got {extended_summary!r}")
        self.extended_summary = extended_summary
        if average not in ("macro", "micro"):
            raise ValueError(f"average: expected 'macro' or 'micro', got {average!r}")
        self.average = average
        if backend not in _BACKENDS:
            raise ValueError(f"backend: expected one of {_BACKENDS}, got {backend!r}")
        self.backend = backend
        self._iou_tensor = torch.tensor(self.iou_thresholds, dtype=torch.float64)
        width = 2 + 2 * ((len(self.iou_thresholds) + 9) // 10)
        for i_type in self.iou_type:
            for pair in self._row_pairs():
                self.add_state(f"{i_type}{pair}_detections", torch.empty(0, width, dtype=torch.int32), reduce="cat")
                self.add_state(f"{i_type}{pair}_groundtruths", torch.empty(0, 2, dtype=torch.int32), reduce="cat")
        self.add_state("labels_seen", torch.empty(0, dtype=torch.int32), reduce="cat")
        # images, images with a detection, images with a ground truth (torchmetrics' "no image" rule)
        self.add_state("image_counts", torch.zeros(3, dtype=torch.int64), reduce="sum")

    def _row_pairs(self) -> Tuple[str, ...]:
        """"" (the main evaluation's rows) and, under micro with class_metrics, "_class" (per label)."""
        return ("", "_class") if self.average == "micro" and self.class_metrics else ("",)

    def update(self, preds: List[Dict[str, Tensor]], target: List[Dict[str, Tensor]]) -> None:
        rows: Dict[str, Tuple[Tensor, Tensor]] = {}
        mdt = self.max_detection_thresholds
        # segm first: its check of the masks comes before the bbox pass reads their areas
        for i_type in sorted(self.iou_type, reverse=True):
            tgt = _mask_areas(target) if i_type == "bbox" and len(self.iou_type) > 1 else target
            for pair in self._row_pairs():
                agnostic = self.average == "micro" and pair == ""
                rows[f"{i_type}{pair}"] = match_images(
                    preds,
                    tgt,
                    iou_type=i_type,
                    box_format=self.box_format,
                    iou_thresholds=self._iou_tensor,
                    max_detection_thresholds=mdt,
                    class_agnostic=agnostic,
                )
        labels = [item["labels"].reshape(-1) for item in list(preds) + list(target)]
        seen = torch.cat(labels).unique().to(torch.int32) if labels else torch.empty(0, dtype=torch.int32)
        counts = torch.tensor(
            [len(preds), sum(int(p["labels"].numel() > 0) for p in preds), _images_with_gts(target, self.iou_type)],
            dtype=torch.int64,
        )
        for name, (det, gt) in rows.items():
            self.append_state(f"{name}_detections", det.to(torch.int32), copy=False)
            self.append_state(f"{name}_groundtruths", gt.to(torch.int32), copy=False)
        self.append_state("labels_seen", seen.cpu(), copy=False)
        self.image_counts = self.image_counts + counts.to(self.image_counts.device)

    def compute(self) -> Dict[str, Tensor]:
        classes = torch.unique(self.labels_seen).tolist()
        counts = self.image_counts.tolist()
        main_labels = [0] if self.average == "micro" else classes
        result: Dict[str, Tensor] = _Result()
        for i_type in self.iou_type:
            prefix = "" if len(self.iou_type) == 1 else f"{i_type}_"
            if self.iou_type == ("segm",):  # torchmetrics leaves out images without masks
                empty = counts[1] == 0 or counts[2] == 0
            else:
                empty = counts[0] == 0
            class_rows = None
            if self.average == "micro" and self.class_metrics:
                class_rows = (getattr(self, f"{i_type}_class_detections"), getattr(self, f"{i_type}_class_groundtruths"))
            result.update(
                acc.evaluate_rows(
                    getattr(self, f"{i_type}_detections"),
                    getattr(self, f"{i_type}_groundtruths"),
                    labels=main_labels,
                    class_rows=class_rows,
                    classes=classes,
                    empty=empty,
                    prefix=prefix,
                    iou_thresholds=self.iou_thresholds,
                    rec_thresholds=self.rec_thresholds,
                    max_detection_thresholds=self.max_detection_thresholds,
                    class_metrics=self.class_metrics,
                    extended_summary=self.extended_summary,
                    backend=self.backend,
                )
            )
        result["classes"] = torch.tensor(classes, dtype=torch.int32)
        for key, value in result.items():
            if value.numel() == 1:
                result[key] = value.squeeze()
        return result


def _images_with_gts(target: Sequence[Dict[str, Tensor]], iou_type: Tuple[str, ...]) -> int:
    return sum(int(t["labels"].numel() > 0) for t in target)


def _mask_areas(target: Sequence[Dict[str, Tensor]]) -> List[Dict[str, Tensor]]:
    """torchmetrics' boxes-and-masks evaluation keeps the ground truths' mask areas for the bbox
    pass too (the user's ``area`` where it is > 0): the targets with that ``area``."""
    out = []
    for item in target:
        masks = item["masks"]
        mask_area = (masks != 0).flatten(1).sum(1).double() if masks.dim() == 3 else torch.zeros(0)
        area = item.get("area")
        if area is not None:
            area = area.double().reshape(-1)
            area = torch.where(area > 0, area, mask_area.to(area.device))
        else:
            area = mask_area
        out.append({k: v for k, v in item.items() if k != "masks"} | {"area": area})
    return out
