"""torchmetrics.detection's place: ``from torchtally.detection import MeanAveragePrecision``."""

from types import ModuleType
from typing import Tuple

from .metrics import box_overlap, mean_ap, panoptic_quality
from .metrics.box_overlap import *  # noqa: F401,F403  (IntersectionOverUnion, GeneralizedIntersectionOverUnion, ...)
from .metrics.mean_ap import *  # noqa: F401,F403  (MeanAveragePrecision)
from .metrics.panoptic_quality import *  # noqa: F401,F403  (PanopticQuality, ModifiedPanopticQuality)

_MODULES: Tuple[ModuleType, ...] = (mean_ap, box_overlap, panoptic_quality)

__all__ = [name for module in _MODULES for name in module.__all__]
