"""MeanAveragePrecision: COCO's mAP / mAR, matched at update, accumulated at compute.

State: per iou_type, one int32 row per kept detection (16 bytes at up to 10 IoU thresholds:
score bits, label and maxDets level, the outcome at every (IoU threshold, area range) packed
base 3) and one per ground truth (8 bytes: label, area-range mask), both "cat" states; under
average="micro" with class_metrics a second pair, matched per label. Plus the labels seen
(4 bytes per distinct label per update), three image counts and a per-image row (rank, rows
per row state: 8 bytes per image for one iou_type); IoU matrices only with extended_summary. The math:
functional/detection/map.py and coco_accumulate.py.
"""

from typing import TYPE_CHECKING, Any, Dict, List, Literal, Optional, Tuple, Union

import torch
from torch import Tensor

from ..base.metric import Metric
from ..functional.detection import coco_files
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
    * ``extended_summary``'s ``ious`` ({(image, label): float32 [D, G]}, pycocotools'
      ``COCOeval.ious``: detections cut at the largest maxDets in pycocotools' order, ``[]``
      where a side is empty) come from cat states kept only with ``extended_summary=True``: 4
      bytes per IoU value and 12 per matrix (label, D, G), plus 4 bytes per image and iou_type;
    * ``tm_to_coco`` raises NotImplementedError (no boxes, masks or scores are kept);
      ``coco_to_tm`` reads COCO json files as torchmetrics' does;
    * ``backend`` chooses whose summary conventions are followed: ``"pycocotools"`` reads
      ``map`` at maxDets == 100 (-1 when 100 is not a threshold, as pycocotools),
      ``"faster_coco_eval"`` at the last threshold; neither package is needed;
    * bad input (NaN boxes or scores, x2 < x1, labels that are not integers...) raises a
      ValueError naming the image and key, and leaves the state unchanged; thresholds that are
      not numbers, or max detection thresholds below 1, are a ValueError at construction;
    * with several ranks the images are put in torchmetrics' gathered order (image i of each
      rank in rank order, then image i + 1: the dataset's order under a DistributedSampler)
      from a per-image "cat" state (int32: rank * 2 + has a ground truth, then the rows of each
      row state; 8 bytes per image for one iou_type), also for uneven shards, which
      torchmetrics' gather cannot take; ``merge_state`` of metrics of one process concatenates;
    * ``iou_type=("bbox", "segm")`` with ``average="micro"`` and ``class_metrics``: both types'
      main values are micro (torchmetrics' second type reports macro values there: its per-class
      pass replaces the datasets the second type is evaluated on).

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
        images: Tensor
        labels_seen: Tensor

    is_differentiable = False
    traceable_update = False  # the matching reads boxes, scores and labels in Python: eager in torch.compile
    higher_is_better = True
    full_state_update = True
    plot_lower_bound = 0.0
    plot_upper_bound = 1.0
    #: torchmetrics' switch (an attribute, set after construction) for the UserWarning about an
    #: image with more detections than the largest of ``max_detection_thresholds``
    warn_on_many_detections: bool = True

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
            if self.extended_summary:
                self.add_state(f"{i_type}_iou_values", torch.empty(0, dtype=torch.float32), reduce="cat")
                self.add_state(f"{i_type}_iou_index", torch.empty(0, 3, dtype=torch.int32), reduce="cat")
        self.add_state("labels_seen", torch.empty(0, dtype=torch.int32), reduce="cat")
        # per image: rank * 2 + (has a ground truth), its rows per row state (and IoU matrices)
        self.add_state("images", torch.empty(0, opts.image_columns(), dtype=torch.int32), reduce="cat")
        # images, images with a detection, images with a ground truth (torchmetrics' "no image" rule)
        self.add_state("image_counts", torch.zeros(3, dtype=torch.int64), reduce="sum")

    @staticmethod
    def coco_to_tm(
        coco_preds: str,
        coco_target: str,
        iou_type: Union[Literal["bbox", "segm"], Tuple[Literal["bbox", "segm"], ...]] = ("bbox",),
        backend: Literal["pycocotools", "faster_coco_eval"] = "pycocotools",
    ) -> Tuple[List[Dict[str, Tensor]], List[Dict[str, Tensor]]]:
        """(preds, target) lists of dicts, this metric's inputs, from a COCO results json file and
        a COCO ground-truth json file (boxes (x, y, w, h): use ``box_format="xywh"``; masks
        decoded with ``backend``'s COCO tools, which must be installed). Needs no state."""
        types = map_fn.Options("xywh", iou_type, None, None, None, False, False, "macro", backend).iou_type
        return coco_files.coco_to_lists(coco_preds, coco_target, types, backend)

    def tm_to_coco(self, name: str = "tm_map_input") -> None:
        """Not available: torchmetrics writes its accumulated boxes, masks and scores to
        ``<name>_preds.json`` / ``<name>_target.json``; this metric keeps none of them after
        ``update`` (only one compact row per detection and ground truth), so it raises
        NotImplementedError saying what to do instead."""
        raise NotImplementedError(
            f"tm_to_coco({name!r}): torchtally's MeanAveragePrecision keeps no boxes, masks or scores after "
            "update (only one matched row per detection and ground truth), so it cannot write them as COCO json. "
            "Write the preds and targets as you feed them (COCO's results and dataset formats), or feed the same "
            "lists to torchmetrics' MeanAveragePrecision and call its tm_to_coco."
        )

    def _rank(self) -> int:
        """This process's rank in the metric's process group (0 without torch.distributed)."""
        if not (torch.distributed.is_available() and torch.distributed.is_initialized()):
            return 0
        group = self.process_group
        return max(0, torch.distributed.get_rank(group) if group is not None else torch.distributed.get_rank())

    def update(self, preds: List[Dict[str, Tensor]], target: List[Dict[str, Tensor]]) -> None:
        rank = self._rank()
        batch = map_fn.batch_rows(preds, target, self._opts, rank)
        for name, (det, gt) in batch.rows.items():
            self.append_state(f"{name}_detections", det, copy=False)
            self.append_state(f"{name}_groundtruths", gt, copy=False)
        for i_type, (values, index) in batch.ious.items():
            self.append_state(f"{i_type}_iou_values", values, copy=False)
            self.append_state(f"{i_type}_iou_index", index, copy=False)
        self.append_state("labels_seen", batch.labels, copy=False)
        self.append_state("images", batch.images, copy=False)
        self.image_counts = self.image_counts + batch.counts.to(self.image_counts.device)
        if batch.crowded >= 0 and self.warn_on_many_detections and rank == 0:
            map_fn.warn_many_detections(self.max_detection_thresholds[-1], batch.crowded)

    def compute(self) -> Dict[str, Any]:
        rows = {
            name: (getattr(self, f"{name}_detections"), getattr(self, f"{name}_groundtruths"))
            for name in self._opts.row_names()
        }
        ious = {}
        if self.extended_summary:
            ious = {t: (getattr(self, f"{t}_iou_values"), getattr(self, f"{t}_iou_index")) for t in self.iou_type}
        return map_fn.result(rows, self.labels_seen.cpu(), self.image_counts.tolist(), self._opts, self.images, ious)
