"""mean_iou, dice_score and generalized_dice_score, and the per-sample ratios the classes sum.

Every function takes counts int64 [N, C, 3] = (intersection, prediction pixels, target pixels)
from `counts.overlap_counts` and works in float64; the public functions return the default
float dtype, shaped as torchmetrics 1.9 returns them:

    mean_iou               [N] (mean over the classes present in pred or target; NaN with none),
                           [N, C] with per_class (-1 for a class absent from both)
    dice_score             [N] or [N, C] with average "none"; aggregation_level "global": [1] / [1, C]
    generalized_dice_score [N] or [N, C] with per_class
"""

from typing import Any, Optional, Tuple

import torch
from torch import Tensor

from .counts import check_bool, check_input_format, check_optional_num_classes, drop_background, overlap_counts

__all__ = ["mean_iou"]

AVERAGES = ("micro", "macro", "weighted", "none")
AGGREGATION_LEVELS = ("samplewise", "global")
WEIGHT_TYPES = ("square", "simple", "linear")


def check_average(average: object) -> str:
    if average is None:
        return "none"
    if average not in AVERAGES:
        raise ValueError(f"average: expected one of {AVERAGES} or None, got {average!r}")
    return str(average)


def check_aggregation_level(level: object) -> str:
    if level not in AGGREGATION_LEVELS:
        raise ValueError(f"aggregation_level: expected one of {AGGREGATION_LEVELS}, got {level!r}")
    return str(level)


def check_weight_type(weight_type: object) -> str:
    if weight_type not in WEIGHT_TYPES:
        raise ValueError(f"weight_type: expected one of {WEIGHT_TYPES}, got {weight_type!r}")
    return str(weight_type)


def _ratio(num: Tensor, den: Tensor, zero: float) -> Tensor:
    """num / den in float64, ``zero`` where den == 0."""
    num, den = num.double(), den.double()
    return torch.where(den == 0, torch.full_like(num, zero), num / torch.where(den == 0, 1.0, den))


def iou_rows(counts: Tensor) -> Tensor:
    """float64 [N, C]: intersection / union per sample and class, NaN where the union is empty."""
    inter, pred, target = counts.unbind(-1)
    return _ratio(inter, pred + target - inter, float("nan"))


def mean_iou_reshaped(preds: Any, target: Any, input_format: str) -> Tuple[Any, Any]:
    """torchmetrics' mean_iou reading of small index maps: [L] is one image [1, 1, L], [H, W] one image [1, H, W]."""
    if input_format == "one-hot":
        return preds, target
    out = []
    for t in (preds, target):
        if isinstance(t, Tensor) and t.dim() in (1, 2):
            t = t.reshape(1, 1, -1) if t.dim() == 1 else t.unsqueeze(0)
        out.append(t)
    return out[0], out[1]


def dice_parts(counts: Tensor) -> Tuple[Tensor, Tensor, Tensor]:
    """(2 * intersection, prediction + target pixels, target pixels), int64 [N, C] each."""
    inter, pred, target = counts.unbind(-1)
    return 2 * inter, pred + target, target


def dice_rows(counts: Tensor, average: str) -> Tensor:
    """float64: the Dice score of each row of counts [R, C, 3] averaged over classes as
    ``average`` says ([R], or [R, C] for "none"); NaN where a row (class) has nothing to score."""
    num, den, support = dice_parts(counts)
    nan = float("nan")
    if average == "micro":
        return _ratio(num.sum(-1), den.sum(-1), nan)
    dice = _ratio(num, den, nan)
    if average == "none":
        return dice
    if average == "macro":
        return torch.nanmean(dice, dim=-1)
    # weighted by target pixels; a row of all-NaN scores stays NaN, a row without target pixels
    # (but with predicted ones) scores 0, as torchmetrics
    weights = _ratio(support, support.sum(-1, keepdim=True), nan)
    weighted = torch.nansum(dice * weights, dim=-1)
    return torch.where(dice.isnan().all(dim=-1), nan, weighted)


def gdice_parts(counts: Tensor, weight_type: str) -> Tuple[Tensor, Tensor]:
    """float64 [N, C] weighted numerator and denominator of the generalized Dice score.

    A class without target pixels has an infinite "simple"/"square" weight; it is replaced as
    torchmetrics 1.9 replaces it: by the batch's largest finite weight of a class taken in
    the order its code reads them (entry (n, c), row-major position k, takes the largest weight
    of class k // N over the batch's samples), so the score depends on the batch it arrives in."""
    inter, pred, target = (x.double() for x in counts.unbind(-1))
    n, c = target.shape
    if weight_type == "linear":
        weights = torch.ones_like(target)
    else:
        power = 1 if weight_type == "simple" else 2
        absent = target == 0
        weights = torch.where(absent, 0.0, 1.0 / torch.where(absent, 1.0, target) ** power)
        if n:  # (whether a class is absent is not asked: the answer would be a host read)
            largest = weights.max(dim=0).values
            position = torch.arange(n * c, device=target.device) // n
            weights = torch.where(absent, largest[position].view(n, c), weights)
    return 2.0 * inter * weights, (pred + target) * weights


def gdice_rows(counts: Tensor, weight_type: str, per_class: bool) -> Tensor:
    """float64 [N] (or [N, C] with per_class): the generalized Dice score, 0 where nothing is scored."""
    num, den = gdice_parts(counts, weight_type)
    if not per_class:
        num, den = num.sum(-1), den.sum(-1)
    return _ratio(num, den, 0.0)


def in_default_dtype(x: Tensor) -> Tensor:
    """A result in torch's default float dtype (as torchmetrics returns these scores)."""
    return x.to(torch.get_default_dtype())


def mean_iou(
    preds: Tensor,
    target: Tensor,
    num_classes: Optional[int] = None,
    include_background: bool = True,
    per_class: bool = False,
    input_format: str = "one-hot",
) -> Tensor:
    """Intersection over union per sample: the mean over the classes present in preds or target
    ([N]; NaN for a sample with none), or per class with ``per_class`` ([N, C], -1 for a class
    absent from both). ``num_classes`` is needed for ``input_format="index"``.

    >>> import torch
    >>> from torchtally.functional.segmentation import mean_iou
    >>> preds = torch.tensor([[[0, 0, 1], [1, 1, 1]]])
    >>> target = torch.tensor([[[0, 1, 1], [1, 1, 2]]])
    >>> mean_iou(preds, target, num_classes=3, input_format="index")
    tensor([0.3667])
    >>> mean_iou(preds, target, num_classes=3, per_class=True, input_format="index")
    tensor([[0.5000, 0.6000, 0.0000]])
    """
    check_optional_num_classes(num_classes, input_format != "index")
    check_bool("include_background", include_background)
    check_bool("per_class", per_class)
    input_format = check_input_format(input_format)
    preds, target = mean_iou_reshaped(preds, target, input_format)
    counts = drop_background(overlap_counts(preds, target, num_classes, input_format), include_background)
    iou = iou_rows(counts)
    if per_class:
        return in_default_dtype(iou.nan_to_num(-1.0))
    return in_default_dtype(iou.nansum(-1) / (~iou.isnan()).sum(-1))
