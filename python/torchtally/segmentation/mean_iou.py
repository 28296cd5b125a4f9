"""MeanIoU, DiceScore and GeneralizedDiceScore: overlap of segmentation masks, from per-sample,
per-class counts (intersection, prediction pixels, target pixels) made in one kernel call per
batch (torchtally.functional.segmentation.counts: label counts for index maps and the argmax of
scores, mask counts for 0/1 masks), C kernels on CPU and CUDA. The value checks are the
kernels', so an update reads no value back to the host: on CUDA the kernels leave the batch's
verdict on the device and the update adds only what it lets through (for now the verdict is then
read back once, to raise a bad batch at its call, until the deferred-check registry takes it).

State (C' = classes kept: num_classes, less the background unless include_background):

    MeanIoU               iou_sum float64 [C'], present int64 [C']: the per-sample IoU summed
                          over the samples where the class is present (in preds or target), and
                          their number; "sum". Without num_classes C comes from the first batch:
                          "merge" states of that length (a rank without a batch holds none)
    DiceScore  global     counts int64 [C', 3], "sum": exact, shared by DiceScores of one options
                          set in a MetricCollection (``state_key``)
               samplewise score_sum float64 [C'] ("none") or [1], scored int64 likewise, "sum":
                          the per-sample score summed over the samples where it is defined
    GeneralizedDiceScore  score_sum float64 [C'] (per_class) or [1], samples int64 [], "sum"

torchmetrics averages MeanIoU and samplewise DiceScore per sample first; a sum of per-sample
values and a count give that mean exactly with fixed-shape states (torchmetrics' DiceScore keeps
3 rows of C values per sample in lists). Results are in ``self.dtype``.

Differences from torchmetrics, common to these classes:

* bad input raises ValueError/TypeError naming the argument, state unchanged: an index outside
  [0, num_classes) or a float index map, a one-hot mask holding values other than 0/1 (torchmetrics
  counts them as they are), NaN scores, a one-hot C other than num_classes (torchmetrics ignores
  num_classes for integer one-hot input);
* index maps of any integer dtype are accepted (torchmetrics: int64 only);
* sums are float64 (torchmetrics: float32).
"""

from typing import TYPE_CHECKING, Any, Dict, List, Optional, Tuple

import torch
from torch import Tensor

from ..base.metric import Metric
from ..base.state_dict import check_nonnegative
from ..base.states import HeldStates
from ..functional.segmentation import counts as seg_counts
from ..functional.segmentation.mean_iou import iou_rows, mean_iou_reshaped

__all__ = ["MeanIoU"]

F64 = torch.float64


class OverlapMetric(Metric):
    is_differentiable = False
    traceable_update = False  # the checks read the masks' values (0/1, index range): eager in torch.compile
    higher_is_better: Optional[bool] = True
    full_state_update = False
    plot_lower_bound: Optional[float] = 0.0
    plot_upper_bound: Optional[float] = 1.0
    fresh_compute_results = True  # compute makes its own tensors

    num_classes: Optional[int]
    include_background: bool
    input_format: str

    def _kept(self) -> int:
        assert self.num_classes is not None
        return self.num_classes - 1 if not self.include_background and self.num_classes > 1 else self.num_classes

    def _counts(self, preds: Tensor, target: Tensor) -> Tuple[Tensor, Optional[Tensor]]:
        """The batch's counts (background dropped per include_background) and, on CUDA, its device
        verdict: the update adds only values gated on it (seg_counts.gated)."""
        counted = seg_counts.counted(preds, target, self.num_classes, self.input_format)
        return seg_counts.drop_background(counted.counts, self.include_background), counted.ok

    def _out(self, x: Tensor) -> Tensor:
        return self.in_result_dtype(x)

    def check_state_invariants(self, states: Dict[str, Tensor]) -> None:
        """Counts and sums >= 0 (see Metric)."""
        super().check_state_invariants(states)
        check_nonnegative(states, *states)


class MeanIoU(OverlapMetric):
    """Mean intersection over union of segmentation masks: per sample and class, ``|P and T| / |P or T|``
    over the classes present in preds or target, averaged over samples (and classes unless
    ``per_class``; a class never present is -1 with ``per_class``). Inputs per ``input_format``:
    "one-hot" [N, C, ...] 0/1 masks or float scores (argmax), "index" [N, ...] class indices
    (``num_classes`` required), "mixed" one of each.

    Without ``num_classes`` (one-hot inputs), C is the first batch's, as torchmetrics takes it; a
    later batch, or another rank, with another C raises ValueError.

    Differences from torchmetrics: see the module docstring.

    >>> import torch
    >>> from torchtally.segmentation import MeanIoU
    >>> preds = torch.tensor([[[0, 0, 1], [1, 1, 1]]])
    >>> target = torch.tensor([[[0, 1, 1], [1, 1, 2]]])
    >>> MeanIoU(num_classes=3, input_format="index").update(preds, target).compute()
    tensor(0.3667)
    >>> MeanIoU(num_classes=3, per_class=True, input_format="index").update(preds, target).compute()
    tensor([0.5000, 0.6000, 0.0000])
    """

    plot_legend_name: Optional[str] = "Class"

    if TYPE_CHECKING:  # states declared with add_state (read and assigned as attributes)
        iou_sum: Tensor
        present: Tensor

    def __init__(
        self,
        num_classes: Optional[int] = None,
        include_background: bool = True,
        per_class: bool = False,
        input_format: str = "one-hot",
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.input_format = seg_counts.check_input_format(input_format)
        self.num_classes = seg_counts.check_optional_num_classes(num_classes, self.input_format != "index")
        self.include_background = seg_counts.check_bool("include_background", include_background)
        self.per_class = seg_counts.check_bool("per_class", per_class)
        # without num_classes: per-class sums as long as the first batch's C, merged by length
        width, reduce = (self._kept(), "sum") if self.num_classes is not None else (0, "merge")
        self.add_state("iou_sum", torch.zeros(width, dtype=F64), reduce=reduce)
        self.add_state("present", torch.zeros(width, dtype=torch.int64), reduce=reduce)

    def update(self, preds: Tensor, target: Tensor) -> None:
        """preds, target: per ``input_format`` (see the class)."""
        preds, target = mean_iou_reshaped(preds, target, self.input_format)
        counts, ok = self._counts(preds, target)
        iou = iou_rows(counts)
        present = ~iou.isnan()
        sums, hits = seg_counts.gated(iou.nan_to_num(0.0).sum(0), ok), seg_counts.gated(present.sum(0), ok)
        if self.num_classes is None and self.iou_sum.numel() == 0:  # the first batch sets C
            self.iou_sum, self.present = sums.to(F64), hits
            return
        if sums.shape != self.iou_sum.shape:
            raise ValueError(
                f"preds: expected {self.iou_sum.numel()} classes (kept), as the batches before, got {sums.numel()}"
            )
        self.iou_sum += sums
        self.present += hits

    def combined_with(self, held: HeldStates) -> Dict[str, Any]:
        """forward's batch (the states now) added to the batches before (``held``): a batch with
        another C is refused naming preds, as update refuses it (merge_state_values' message
        would speak of ranks and metrics)."""
        before, now = held.values["iou_sum"].numel(), self.iou_sum.numel()
        if self.num_classes is None and before and now and before != now:
            raise ValueError(f"preds: expected {before} classes (kept), as the batches before, got {now}")
        return super().combined_with(held)

    def merge_state_values(self, name: str, values: List[Tensor]) -> Tensor:
        """The per-class sums of ranks (or metrics) that learned C from their batches: summed,
        those without a batch left out; a different C raises."""
        held = [v for v in values if v.numel()]
        if not held:
            return values[0].clone()
        if any(v.shape != held[0].shape for v in held):
            raise ValueError(
                f"MeanIoU: the per-class sums to merge (one per rank, or per metric given to merge_state) have "
                f"different numbers of classes: {[v.numel() for v in held]}; without num_classes every batch must "
                f"bring the first batch's number of classes"
            )
        return torch.stack(held).sum(0)

    def compute(self) -> Tensor:
        if self.per_class:
            return self._out((self.iou_sum / self.present).nan_to_num(-1.0))
        return self._out(self.iou_sum.sum() / self.present.sum())
