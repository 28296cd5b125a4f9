"""torchmetrics.detection's place: ``from torchtally.detection import MeanAveragePrecision``."""

from types import ModuleType
from typing import Tuple

from .metrics import box_overlap
from .metrics.box_overlap import *  # noqa: F401,F403

_MODULES: Tuple[ModuleType, ...] = (box_overlap,)

__all__ = [name for module in _MODULES for name in module.__all__]
