"""Segmentation: the public functions (torchmetrics.functional.segmentation's names and signatures).

One batch in, the metric per sample out, computed from the same per-sample, per-class counts
(and the same checks) as the classes in torchtally.segmentation: `counts` reads the inputs,
`overlap` holds mean_iou, dice_score and generalized_dice_score, `surface_distance` holds
hausdorff_distance.
"""

from typing import List

from . import mean_iou as overlap
from . import hausdorff_distance as surface_distance
from .mean_iou import *  # noqa: F401,F403  (mean_iou, dice_score, generalized_dice_score)
from .hausdorff_distance import *  # noqa: F401,F403  (hausdorff_distance)

__all__: List[str] = list(overlap.__all__) + list(surface_distance.__all__)
