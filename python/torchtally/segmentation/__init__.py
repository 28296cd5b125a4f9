"""torchmetrics.segmentation's place: ``from torchtally.segmentation import MeanIoU``."""

from types import ModuleType
from typing import Tuple

from .metrics import segmentation_overlap, surface_distance
from .segmentation.mean_iou import *  # noqa: F401,F403  (MeanIoU, DiceScore, GeneralizedDiceScore)
from .segmentation.hausdorff_distance import *  # noqa: F401,F403  (HausdorffDistance)

_MODULES: Tuple[ModuleType, ...] = (segmentation_overlap, surface_distance)

__all__ = [name for module in _MODULES for name in module.__all__]
