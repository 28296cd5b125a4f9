"""torchmetrics.detection's place: ``from torchtally.detection import MeanAveragePrecision``."""

from types import ModuleType
from typing import Tuple

from .metrics import mean_ap
from .metrics.mean_ap import *  # noqa: F401,F403  (MeanAveragePrecision)

_MODULES: Tuple[ModuleType, ...] = (mean_ap,)

__all__ = [name for module in _MODULES for name in module.__all__]
