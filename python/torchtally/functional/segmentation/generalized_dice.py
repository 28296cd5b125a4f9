"""``generalized_dice_score`` (torchmetrics.functional.segmentation.generalized_dice's names).
Generalized Dice score per sample ([N], or [N, C] with ``per_class``)."""

from torch import Tensor

from .counts import check_bool, check_input_format, check_num_classes, drop_background, overlap_counts
from .mean_iou import check_weight_type, gdice_rows, in_default_dtype

__all__ = ["generalized_dice_score"]


def generalized_dice_score(
    preds: Tensor,
    target: Tensor,
    num_classes: int,
    include_background: bool = True,
    per_class: bool = False,
    weight_type: str = "square",
    input_format: str = "one-hot",
) -> Tensor:
    """Generalized Dice score per sample ([N], or [N, C] with ``per_class``): classes weighted by
    1 / (target pixels)^2 ("square"), 1 / target pixels ("simple") or 1 ("linear"); 0 where
    nothing is scored.

    >>> import torch
    >>> from torchtally.functional.segmentation import generalized_dice_score
    >>> preds = torch.tensor([[[0, 0, 1], [1, 1, 1]]])
    >>> target = torch.tensor([[[0, 1, 1], [1, 1, 1]]])
    >>> generalized_dice_score(preds, target, num_classes=2, input_format="index")
    tensor([0.6905])
    """
    check_num_classes(num_classes)
    check_bool("include_background", include_background)
    check_bool("per_class", per_class)
    weight_type = check_weight_type(weight_type)
    input_format = check_input_format(input_format)
    counts = drop_background(overlap_counts(preds, target, num_classes, input_format), include_background)
    return in_default_dtype(gdice_rows(counts, weight_type, per_class))
