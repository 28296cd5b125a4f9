"""The IoU family of torchmetrics.detection: IntersectionOverUnion, GeneralizedIntersectionOverUnion,
DistanceIntersectionOverUnion and CompleteIntersectionOverUnion. State declarations; what a
batch counts is torchtally.functional.detection.box_overlap_update's docstring (torchmetrics'
rule), the values come from the box-overlap kernel (csrc/API.md, "Box overlap").

Constructor signatures, accepted inputs and result keys are torchmetrics': ``update(preds,
target)`` takes one dict per image, ``boxes`` [N, 4] in ``box_format`` and integer ``labels``
[N]; ``compute()`` returns ``{"iou": mean}`` (``giou``, ``diou``, ``ciou``) and, with
``class_metrics=True``, ``{"iou/cl_<label>": mean}`` for every label seen, in ascending order.

State, for the sync: a float64 sum and an int64 count of every counted value ("sum" states: one
all_reduce), and with ``class_metrics`` two "cat" states of one row per label of each batch,
``class_rows`` int64 [R, 2] (label, count) and ``class_sums`` float64 [R]: 24 bytes per label
and batch, whatever the number of boxes (torchmetrics keeps every image's N x M matrix and its
labels).

Differences from torchmetrics, on purpose:

* exact sums of torchvision's values: each pair's value is computed as torchvision does, step by
  step in its order and precision (float32, float64 for float64 boxes, with its float16 /
  bfloat16 roundings), so it is torchvision's bit for bit and a value at ``iou_threshold`` falls
  on the same side as in torchmetrics; the values are summed in float64 (torchmetrics averages
  them in float32), so results agree to the float32 rounding of the mean. Left: CIoU's arctangent
  is the C library's, torch's is SLEEF's; for about 1 aspect ratio in 10^4 (float32; 10^3 for
  float64) they differ in the last bit and that CIoU by an ulp or so; integer boxes are computed
  in float32 (torchvision: in integers), the same while areas stay below 2^24;
* errors instead of garbage: NaN or inf in a box, a box with x2 < x1 or y2 < y1 (after the
  conversion from ``box_format``), labels that are not integers or not one per box, a missing
  key or lists of different lengths raise, naming the argument, with the state unchanged; a
  counted pair whose value is undefined (0 / 0: two boxes of zero area; for CIoU a box of zero
  width and height) raises ValueError (torchmetrics' mean turns NaN into 0 for the whole result);
  boxes or labels that are not tensors raise ``torchtally.errors.InputTypeError``, a TypeError
  that is also the ValueError torchmetrics raises (its words kept in parentheses);
* ``class_metrics=True`` with an image that has predictions and no targets works (its zeros
  count in the overall mean only, and its labels are classes); torchmetrics raises IndexError;
* results are in ``self.dtype`` (torch's default dtype when the metric was made; torchmetrics:
  the boxes' dtype), and ``compute()`` before any update gives 0 with a warning, also with
  ``class_metrics`` (torchmetrics raises there).
"""

from typing import TYPE_CHECKING, Any, Dict, Optional

import torch
from torch import Tensor

from ..base.metric import Metric
from ..base.state_dict import check_nonnegative
from ..functional.detection import box_overlap_compute, box_overlap_update

__all__ = ["IntersectionOverUnion"]

_F64 = torch.float64


class IntersectionOverUnion(Metric):
    """Mean intersection over union of predicted and target boxes, image by image, over every
    (prediction, target) pair of the same label (``respect_labels``; every pair without it)
    whose value is at least ``iou_threshold`` (None: all). ``class_metrics=True`` adds the mean
    per target label. An image without predictions counts a 0 for each target, as torchmetrics.

    ``box_format``: "xyxy" (x1, y1, x2, y2), "xywh" (x1, y1, width, height) or "cxcywh" (centre,
    width, height). State: sums (see this module's docstring: 24 bytes per label and batch with
    ``class_metrics``, nothing per box). Differences from torchmetrics: in this module's
    docstring (exact float64 sums; bad boxes, labels and undefined values raise).

        >>> import torch
        >>> from torchtally.detection import IntersectionOverUnion
        >>> preds = [{"boxes": torch.tensor([[0.0, 0.0, 10.0, 10.0], [5.0, 5.0, 15.0, 15.0]]),
        ...           "labels": torch.tensor([1, 2])}]
        >>> target = [{"boxes": torch.tensor([[0.0, 0.0, 10.0, 5.0], [5.0, 5.0, 10.0, 10.0]]),
        ...            "labels": torch.tensor([1, 2])}]
        >>> IntersectionOverUnion().update(preds, target).compute()
        {'iou': tensor(0.3750)}
        >>> IntersectionOverUnion(class_metrics=True, respect_labels=False).update(preds, target).compute()
        {'iou': tensor(0.2500), 'iou/cl_1': tensor(0.2500), 'iou/cl_2': tensor(0.2500)}
    """

    is_differentiable = False
    higher_is_better: Optional[bool] = True
    full_state_update = False
    traceable_update = False  # the inputs are lists of dicts, read in Python
    _iou_type = "iou"
    if TYPE_CHECKING:  # states declared with add_state (read and assigned as attributes)
        value_sum: Tensor
        value_count: Tensor
        class_rows: Tensor
        class_sums: Tensor

    def __init__(
        self,
        box_format: str = "xyxy",
        iou_threshold: Optional[float] = None,
        class_metrics: bool = False,
        respect_labels: bool = True,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.box_format = box_overlap_update.check_box_format(box_format)
        self.iou_threshold = box_overlap_update.check_threshold("iou_threshold", iou_threshold)
        self.class_metrics = box_overlap_update.check_flag("class_metrics", class_metrics)
        self.respect_labels = box_overlap_update.check_flag("respect_labels", respect_labels)
        self.add_state("value_sum", torch.tensor(0.0, dtype=_F64), reduce="sum")
        self.add_state("value_count", torch.tensor(0, dtype=torch.int64), reduce="sum")
        self.add_state("class_rows", torch.empty(0, 2, dtype=torch.int64), reduce="cat")
        self.add_state("class_sums", torch.empty(0, dtype=_F64), reduce="cat")

    def update(self, preds: Any, target: Any) -> None:
        sums = box_overlap_update.batch_sums(
            preds, target, self._iou_type, self.box_format, self.iou_threshold, self.respect_labels, self.class_metrics
        )
        device = self.value_sum.device
        self.value_sum += sums.total.to(device)
        self.value_count += sums.count.to(device)
        if sums.class_rows.shape[0] > 0:
            self.append_state("class_rows", sums.class_rows.to(device), copy=False)
            self.append_state("class_sums", sums.class_sums.to(device), copy=False)

    def compute(self) -> Dict[str, Tensor]:
        return box_overlap_compute.results(
            self._iou_type,
            self.value_sum,
            self.value_count,
            self.class_rows,
            self.class_sums,
            self.class_metrics,
            self.dtype,
        )

    def check_state_invariants(self, states: Dict[str, Tensor]) -> None:
        super().check_state_invariants(states)
        check_nonnegative(states, "value_count")
        rows, sums = states["class_rows"], states["class_sums"]
        if rows.shape[0] != sums.shape[0]:
            raise ValueError(
                f"'class_rows' and 'class_sums': expected as many rows, got {rows.shape[0]} and {sums.shape[0]}"
            )
        if rows.shape[0] and bool((rows[:, 1] < 0).any()):
            raise ValueError("'class_rows': a negative count")
