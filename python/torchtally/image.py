"""torchmetrics.image's place: ``from torchtally.image import StructuralSimilarityIndexMeasure``."""

from types import ModuleType
from typing import Tuple

from .metrics import image_fid
from .metrics.image_fid import *  # noqa: F403

_MODULES: Tuple[ModuleType, ...] = (image_fid,)

__all__ = [name for module in _MODULES for name in module.__all__]
