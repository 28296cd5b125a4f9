"""MeanAveragePrecision: COCO's mAP / mAR, matched at update, accumulated at compute.

State: per iou_type, one int32 row per kept detection (16 bytes at up to 10 IoU thresholds:
score bits, label and maxDets level, the outcome at every (IoU threshold, area range) packed
base 3) and one per ground truth (8 bytes: label, area-range mask), both "cat" states; under
average="micro" with class_metrics a second pair, matched per label. Plus the labels seen
(4 bytes per distinct label per update) and three image counts. The math:
functional/detection/map.py and coco_accumulate.py.
"""

from typing import TYPE_CHECKING, Any, Dict, List, Literal, Optional, Tuple, Union

import torch
from torch import Tensor

from ..base.metric import Metric
from ..functional.detection import map as map_fn

__all__ = ["MeanAveragePrecision"]


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
        >>> result = MeanAveragePrecision().update(preds, target).compute()
        >>> round(result["map"].item(), 4), round(result["map_50"].item(), 4), result["classes"]
        (0.6, 1.0, tensor(0, dtype=torch.int32))
    """

    if TYPE_CHECKING:  # states declared with add_state (read and assigned as attributes)
        image_counts: Tensor
        labels_seen: Tensor

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
        opts = map_fn.Options(
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
        self._opts = opts
        self.box_format = opts.box_format
        self.iou_type = opts.iou_type
        self.iou_thresholds = opts.iou_thresholds
        self.rec_thresholds = opts.rec_thresholds
        self.max_detection_thresholds = opts.max_detection_thresholds
        self.class_metrics = opts.class_metrics
        self.extended_summary = opts.extended_summary
        self.average = opts.average
        self.backend = opts.backend
        for i_type in self.iou_type:
            for row_set in opts.row_sets():
                self.add_state(
                    f"{i_type}{row_set}_detections", torch.empty(0, opts.row_width, dtype=torch.int32), reduce="cat"
                )
                self.add_state(f"{i_type}{row_set}_groundtruths", torch.empty(0, 2, dtype=torch.int32), reduce="cat")
        self.add_state("labels_seen", torch.empty(0, dtype=torch.int32), reduce="cat")
        # images, images with a detection, images with a ground truth (torchmetrics' "no image" rule)
        self.add_state("image_counts", torch.zeros(3, dtype=torch.int64), reduce="sum")

    def update(self, preds: List[Dict[str, Tensor]], target: List[Dict[str, Tensor]]) -> None:
        rows, seen, counts = map_fn.batch_rows(preds, target, self._opts)
        for name, (det, gt) in rows.items():
            self.append_state(f"{name}_detections", det, copy=False)
            self.append_state(f"{name}_groundtruths", gt, copy=False)
        self.append_state("labels_seen", seen, copy=False)
        self.image_counts = self.image_counts + counts.to(self.image_counts.device)

    def compute(self) -> Dict[str, Tensor]:
        rows = {
            f"{i_type}{row_set}": (
                getattr(self, f"{i_type}{row_set}_detections"),
                getattr(self, f"{i_type}{row_set}_groundtruths"),
            )
            for i_type in self.iou_type
            for row_set in self._opts.row_sets()
        }
        return map_fn.result(rows, self.labels_seen.cpu(), self.image_counts.tolist(), self._opts)
