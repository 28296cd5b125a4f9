"""``dice_score`` (torchmetrics.functional.segmentation.dice's names). Dice score ``2 |P and T| /
(|P| + |T|)`` per sample ([N], [N, C] with ``average="none"``), or over the whole batch with
``aggregation_level="global"`` ([1], [1, C])."""

from typing import Optional

from torch import Tensor

from .counts import check_bool, check_input_format, check_num_classes, drop_background, overlap_counts
from .mean_iou import check_aggregation_level, check_average, dice_rows, in_default_dtype

__all__ = ["dice_score"]


def dice_score(
    preds: Tensor,
    target: Tensor,
    num_classes: int,
    include_background: bool = True,
    average: Optional[str] = "macro",
    input_format: str = "one-hot",
    aggregation_level: Optional[str] = "samplewise",
) -> Tensor:
    """Dice score ``2 |P and T| / (|P| + |T|)`` per sample ([N], [N, C] with ``average="none"``), or
    over the whole batch with ``aggregation_level="global"`` ([1], [1, C]). NaN where there is
    nothing to score (no pixel of the class in preds or target).

    >>> import torch
    >>> from torchtally.functional.segmentation import dice_score
    >>> preds = torch.tensor([[[0, 0, 1], [1, 1, 1]]])
    >>> target = torch.tensor([[[0, 1, 1], [1, 1, 2]]])
    >>> dice_score(preds, target, num_classes=3, average="none", input_format="index")
    tensor([[0.6667, 0.7500, 0.0000]])
    >>> dice_score(preds, target, num_classes=3, average="micro", input_format="index")
    tensor([0.6667])
    """
    check_num_classes(num_classes)
    check_bool("include_background", include_background)
    average = check_average(average)
    input_format = check_input_format(input_format)
    level = check_aggregation_level(aggregation_level)
    counts = drop_background(overlap_counts(preds, target, num_classes, input_format), include_background)
    if level == "global":
        counts = counts.sum(dim=0, keepdim=True)
    return in_default_dtype(dice_rows(counts, average))
