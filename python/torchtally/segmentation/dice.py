"""``DiceScore`` (torchmetrics.segmentation.dice's names). Dice score ``2 |P and T| / (|P| + |T|)``
of segmentation masks, averaged over classes as ``average`` says ("micro"."""

from typing import Any, Optional

import torch
from torch import Tensor

from ..functional.segmentation import counts as seg_counts
from ..functional.segmentation.mean_iou import check_aggregation_level, check_average, dice_rows
from .mean_iou import F64, OverlapMetric

__all__ = ["DiceScore"]


class DiceScore(OverlapMetric):
    """Dice score ``2 |P and T| / (|P| + |T|)`` of segmentation masks, averaged over classes as
    ``average`` says ("micro": pooled counts, "macro": mean of the defined class scores,
    "weighted": by target pixels, "none"/None: per class), per sample and then over samples
    (``aggregation_level="samplewise"``, samples whose score is undefined left out) or over all
    pixels of all samples at once ("global"). Inputs as MeanIoU's.

    Differences from torchmetrics: see torchtally.segmentation.mean_iou; no
    warning for ``average="micro"`` (torchmetrics warns of a default change that 1.9 made).

    >>> import torch
    >>> from torchtally.segmentation import DiceScore
    >>> preds = torch.tensor([[[0, 0, 1], [1, 1, 1]]])
    >>> target = torch.tensor([[[0, 1, 1], [1, 1, 2]]])
    >>> DiceScore(num_classes=3, input_format="index").update(preds, target).compute()
    tensor(0.4722)
    >>> DiceScore(num_classes=3, average="none", input_format="index").update(preds, target).compute()
    tensor([0.6667, 0.7500, 0.0000])
    """

    plot_legend_name: Optional[str] = "Class"

    def __init__(
        self,
        num_classes: int,
        include_background: bool = True,
        average: Optional[str] = "macro",
        aggregation_level: Optional[str] = "samplewise",
        input_format: str = "one-hot",
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.num_classes = seg_counts.check_num_classes(num_classes)
        self.include_background = seg_counts.check_bool("include_background", include_background)
        self.average = average
        self._average = check_average(average)
        self.aggregation_level = check_aggregation_level(aggregation_level)
        self.input_format = seg_counts.check_input_format(input_format)
        self._global = self.aggregation_level == "global"
        if self._global:
            self.state_key = ("torchtally.segmentation_counts", self.num_classes, self.include_background, input_format)
            self.add_state("counts", torch.zeros(self._kept(), 3, dtype=torch.int64), reduce="sum")
        else:
            width = self._kept() if self._average == "none" else 1
            self.add_state("score_sum", torch.zeros(width, dtype=F64), reduce="sum")
            self.add_state("scored", torch.zeros(width, dtype=torch.int64), reduce="sum")

    def update(self, preds: Tensor, target: Tensor) -> None:
        """preds, target: per ``input_format`` (see MeanIoU)."""
        counts, ok = self._counts(preds, target)
        if self._global:
            self.counts += seg_counts.gated(counts.sum(0), ok)
            return
        rows = dice_rows(counts, self._average)
        if rows.dim() == 1:
            rows = rows.unsqueeze(1)
        self.score_sum += seg_counts.gated(rows.nan_to_num(0.0).sum(0), ok)
        self.scored += seg_counts.gated((~rows.isnan()).sum(0), ok)

    def compute(self) -> Tensor:
        if self._global:
            return self._out(dice_rows(self.counts.unsqueeze(0), self._average)[0])
        result = self.score_sum / self.scored
        return self._out(result if self._average == "none" else result[0])
