"""torchmetrics.segmentation's place: ``from torchtally.segmentation import MeanIoU``."""

from types import ModuleType
from typing import Tuple

_MODULES: Tuple[ModuleType, ...] = ()

__all__ = [name for module in _MODULES for name in module.__all__]
