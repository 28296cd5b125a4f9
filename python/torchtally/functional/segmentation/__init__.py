"""Segmentation: the public functions (torchmetrics.functional.segmentation's names and signatures).

One batch in, the metric per sample out, computed from the same per-sample, per-class counts
(and the same checks) as the classes in torchtally.segmentation: `counts` reads the inputs;
each function has its module (`mean_iou`, `dice`, `generalized_dice`, `hausdorff_distance`).
"""

from .dice import dice_score
from .generalized_dice import generalized_dice_score
from .hausdorff_distance import hausdorff_distance
from .mean_iou import mean_iou

__all__ = ["dice_score", "generalized_dice_score", "hausdorff_distance", "mean_iou"]
