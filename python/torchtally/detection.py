"""torchmetrics.detection's place: ``from torchtally.detection import MeanAveragePrecision``."""

from types import ModuleType
from typing import Tuple

from .metrics import box_overlap, mean_ap
from .metrics.box_overlap import *  # noqa: F401,F403  (IntersectionOverUnion, GeneralizedIntersectionOverUnion, ...)
from .metrics.mean_ap import *  # noqa: F401,F403  (MeanAveragePrecision)

_MODULES: Tuple[ModuleType, ...] = (mean_ap, box_overlap)

__all__ = [name for module in _MODULES for name in module.__all__]
