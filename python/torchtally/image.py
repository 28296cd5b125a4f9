"""torchmetrics.image's place: ``from torchtally.image import StructuralSimilarityIndexMeasure``."""

from types import ModuleType
from typing import Tuple

from .metrics import image_perceptual
from .metrics.image_perceptual import *  # noqa: F401,F403  (LPIPS, DISTS, PerceptualPathLength)

_MODULES: Tuple[ModuleType, ...] = (image_perceptual,)

__all__ = [name for module in _MODULES for name in module.__all__]
