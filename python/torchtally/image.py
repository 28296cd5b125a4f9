"""torchmetrics.image's place: ``from torchtally.image import StructuralSimilarityIndexMeasure``."""

from types import ModuleType
from typing import Tuple

_MODULES: Tuple[ModuleType, ...] = ()

__all__ = [name for module in _MODULES for name in module.__all__]
