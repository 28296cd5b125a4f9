"""Panoptic quality and modified panoptic quality: state declarations; the math lives in
torchtally.functional.detection.panoptic_sums.

State: per category (the things sorted by id, then the stuffs), ``iou_sum`` float64 and
``true_positives``, ``false_positives``, ``false_negatives`` int64; all sum-reduced (a fixed
state: its sync is one small exchange, whatever the number of images). PanopticQuality metrics
of one categories and ``allow_unknown_preds_category`` share it in a MetricCollection.
"""

from collections.abc import Collection
from typing import TYPE_CHECKING, Any, Dict, Tuple

import torch
from torch import Tensor

from ..base.metric import Metric
from ..base.state_dict import check_nonnegative
from ..functional.detection import panoptic_sums as pq

__all__ = ["PanopticQuality", "ModifiedPanopticQuality"]


class _PanopticBase(Metric):
    is_differentiable = False
    higher_is_better = True
    full_state_update = False
    plot_lower_bound = 0.0
    plot_upper_bound = 1.0
    traceable_update = False  # the kernel reads the maps' values (segments): eager inside torch.compile
    _modified = False
    if TYPE_CHECKING:  # declared states, read as attributes
        iou_sum: Tensor
        true_positives: Tensor
        false_positives: Tensor
        false_negatives: Tensor

    def __init__(
        self,
        things: Collection[int],
        stuffs: Collection[int],
        allow_unknown_preds_category: bool = False,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        things, stuffs = pq.parse_categories(things, stuffs)
        if not isinstance(allow_unknown_preds_category, bool):
            raise TypeError(f"allow_unknown_preds_category: expected a bool, got {allow_unknown_preds_category!r}")
        # torchmetrics' attributes (sets and a dict: not options of the sync's fingerprint) ...
        self.things, self.stuffs = things, stuffs
        self.void_color = pq.void_color(things, stuffs)
        self.cat_id_to_continuous_id = pq.continuous_ids(things, stuffs)
        self.allow_unknown_preds_category = allow_unknown_preds_category
        # ... and the categories as plain options, which ranks and loaded checkpoints must agree on
        self.thing_ids: Tuple[int, ...] = tuple(sorted(things))
        self.stuff_ids: Tuple[int, ...] = tuple(sorted(stuffs))
        self._table = pq.category_table(things, stuffs, self._modified)
        n = len(things) + len(stuffs)
        self.add_state("iou_sum", torch.zeros(n, dtype=torch.float64), reduce="sum")
        self.add_state("true_positives", torch.zeros(n, dtype=torch.int64), reduce="sum")
        self.add_state("false_positives", torch.zeros(n, dtype=torch.int64), reduce="sum")
        self.add_state("false_negatives", torch.zeros(n, dtype=torch.int64), reduce="sum")
        self.state_key = (
            "torchtally.panoptic",
            self._modified,
            self.thing_ids,
            self.stuff_ids,
            allow_unknown_preds_category,
        )

    def update(self, preds: Tensor, target: Tensor) -> None:
        states = (self.iou_sum, self.true_positives, self.false_positives, self.false_negatives)
        pq.panoptic_update(states, preds, target, self._table, self.allow_unknown_preds_category)

    def check_state_invariants(self, states: Dict[str, Tensor]) -> None:
        super().check_state_invariants(states)
        check_nonnegative(states, "iou_sum", "true_positives", "false_positives", "false_negatives")


class PanopticQuality(_PanopticBase):
    """Panoptic quality (Kirillov et al.): per category PQ = SQ * RQ, with SQ the mean IoU of the
    matched (predicted, true) segment pairs (IoU > 0.5) and RQ = TP / (TP + FP / 2 + FN / 2);
    averaged over the categories that occur (in preds or target).

    ``preds`` and ``target``: integer maps ``[B, *spatial, 2]`` holding (category id, instance id) of
    every point; segments are matched within each image. A stuff's instance id is ignored.
    Points of a category neither in ``things`` nor in ``stuffs`` are void: always in target, in
    preds only with ``allow_unknown_preds_category=True`` (else ValueError naming preds). Void
    points leave the IoU's union, and a segment mostly (over half) on void is not counted as a
    false positive or negative.

    Output (float64): the average PQ []; with ``return_sq_and_rq`` [3] = (PQ, SQ, RQ); with
    ``return_per_class`` [1, C] per category (things sorted by id, then stuffs sorted), with both
    [C, 3]. A category absent from every image has 0 per class; the averages are NaN when no
    category occurs.

    State: 8 bytes per category for each of ``iou_sum`` (float64) and the three int64 counts;
    sum-reduced.

    Differences from torchmetrics: IoUs, RQ and the 0.5 tests exact or float64 (torchmetrics
    divides in float32, so results agree to about 1e-7); int64 counts (torchmetrics: int32);
    float and bool maps raise TypeError (torchmetrics compares float category ids), as do
    non-int or bool category ids and non-bool flags.

        >>> import torch
        >>> from torchtally.detection import PanopticQuality
        >>> preds = torch.tensor([[[[1, 0], [1, 0], [5, 0], [5, 0]], [[2, 0], [2, 0], [1, 1], [5, 0]]]])
        >>> target = torch.tensor([[[[1, 0], [1, 0], [5, 0], [2, 0]], [[1, 0], [2, 0], [5, 0], [2, 0]]]])
        >>> metric = PanopticQuality(things={1, 2}, stuffs={5}, return_sq_and_rq=True)
        >>> metric.update(preds, target).compute()
        tensor([0.1481, 0.2222, 0.2222], dtype=torch.float64)
    """

    def __init__(
        self,
        things: Collection[int],
        stuffs: Collection[int],
        allow_unknown_preds_category: bool = False,
        return_sq_and_rq: bool = False,
        return_per_class: bool = False,
        **kwargs: Any,
    ) -> None:
        super().__init__(things, stuffs, allow_unknown_preds_category, **kwargs)
        for name, value in (("return_sq_and_rq", return_sq_and_rq), ("return_per_class", return_per_class)):
            if not isinstance(value, bool):
                raise TypeError(f"{name}: expected a bool, got {value!r}")
        self.return_sq_and_rq = return_sq_and_rq
        self.return_per_class = return_per_class

    def compute(self) -> Tensor:
        return pq.panoptic_result(
            self.iou_sum,
            self.true_positives,
            self.false_positives,
            self.false_negatives,
            self.return_sq_and_rq,
            self.return_per_class,
        )


class ModifiedPanopticQuality(_PanopticBase):
    """Modified panoptic quality (Porzi et al., Seamless Scene Segmentation): PQ for the things;
    for a stuff, the IoU of every overlapping (predicted, true) segment pair summed and divided
    by the number of its true segments (no 0.5 threshold, no false positives or negatives);
    averaged over the categories that occur. Inputs, void and ``allow_unknown_preds_category`` as
    PanopticQuality. Output: float64 [].

    State and differences from torchmetrics: as PanopticQuality.

        >>> import torch
        >>> from torchtally.detection import ModifiedPanopticQuality
        >>> preds = torch.tensor([[[[1, 0], [1, 0], [5, 0], [5, 0]], [[2, 0], [2, 0], [1, 1], [5, 0]]]])
        >>> target = torch.tensor([[[[1, 0], [1, 0], [5, 0], [2, 0]], [[1, 0], [2, 0], [5, 0], [2, 0]]]])
        >>> ModifiedPanopticQuality(things={1, 2}, stuffs={5}).update(preds, target).compute()
        tensor(0.2315, dtype=torch.float64)
    """

    _modified = True

    def compute(self) -> Tensor:
        return pq.panoptic_result(self.iou_sum, self.true_positives, self.false_positives, self.false_negatives)
