"""torchmetrics.detection's place: ``from torchtally.detection import MeanAveragePrecision``."""

from types import ModuleType
from typing import Tuple

from .metrics import panoptic_quality
from .metrics.panoptic_quality import *  # noqa: F401,F403

_MODULES: Tuple[ModuleType, ...] = (panoptic_quality,)

__all__ = [name for module in _MODULES for name in module.__all__]
