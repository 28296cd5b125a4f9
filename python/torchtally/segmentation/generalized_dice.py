"""``GeneralizedDiceScore`` (torchmetrics.segmentation.generalized_dice's names). Generalized Dice
score per sample (classes weighted by 1 / target pixels squared ("square"), 1 / target pixels
("simple") or 1 ("linear")."""

from typing import Any, Optional

import torch
from torch import Tensor

from ..functional.segmentation import counts as seg_counts
from ..functional.segmentation.mean_iou import check_weight_type, gdice_rows
from .mean_iou import F64, OverlapMetric

__all__ = ["GeneralizedDiceScore"]


class GeneralizedDiceScore(OverlapMetric):
    """Generalized Dice score per sample (classes weighted by 1 / target pixels squared
    ("square"), 1 / target pixels ("simple") or 1 ("linear"); 0 where nothing is scored),
    averaged over samples; per class with ``per_class``. Inputs as MeanIoU's. A class absent
    from a sample's target takes a weight from the rest of its batch exactly as torchmetrics 1.9
    does (see torchtally.functional.segmentation.mean_iou.gdice_parts), so results depend on how
    samples are batched, as there.

    Differences from torchmetrics: see torchtally.segmentation.mean_iou.

    >>> import torch
    >>> from torchtally.segmentation import GeneralizedDiceScore
    >>> preds = torch.tensor([[[0, 0, 1], [1, 1, 1]]])
    >>> target = torch.tensor([[[0, 1, 1], [1, 1, 1]]])
    >>> GeneralizedDiceScore(num_classes=2, input_format="index").update(preds, target).compute()
    tensor(0.6905)
    """

    plot_legend_name: Optional[str] = "Class"

    def __init__(
        self,
        num_classes: int,
        include_background: bool = True,
        per_class: bool = False,
        weight_type: str = "square",
        input_format: str = "one-hot",
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.num_classes = seg_counts.check_num_classes(num_classes)
        self.include_background = seg_counts.check_bool("include_background", include_background)
        self.per_class = seg_counts.check_bool("per_class", per_class)
        self.weight_type = check_weight_type(weight_type)
        self.input_format = seg_counts.check_input_format(input_format)
        width = self._kept() if self.per_class else 1
        self.add_state("score_sum", torch.zeros(width, dtype=F64), reduce="sum")
        self.add_state("samples", torch.tensor(0, dtype=torch.int64), reduce="sum")

    def update(self, preds: Tensor, target: Tensor) -> None:
        """preds, target: per ``input_format`` (see MeanIoU)."""
        counts, ok = self._counts(preds, target)
        rows = gdice_rows(counts, self.weight_type, self.per_class)
        self.score_sum += seg_counts.gated(rows.sum(0), ok)
        self.samples += counts.shape[0] if ok is None else ok.long() * counts.shape[0]

    def compute(self) -> Tensor:
        result = self.score_sum / self.samples
        return self._out(result if self.per_class else result[0])
