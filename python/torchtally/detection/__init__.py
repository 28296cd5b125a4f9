"""torchmetrics.detection's place: ``from torchtally.detection import MeanAveragePrecision``."""

from types import ModuleType
from typing import Tuple

from .metrics import box_overlap, mean_ap, panoptic_quality
from .detection.iou import *  # noqa: F401,F403  (IntersectionOverUnion, GeneralizedIntersectionOverUnion, ...)
from .detection.mean_ap import *  # noqa: F401,F403  (MeanAveragePrecision)
from .detection.panoptic_qualities import *  # noqa: F401,F403  (PanopticQuality, ModifiedPanopticQuality)

_MODULES: Tuple[ModuleType, ...] = (mean_ap, box_overlap, panoptic_quality)

__all__ = [name for module in _MODULES for name in module.__all__]
