"""torchmetrics.image's place: ``from torchtally.image import StructuralSimilarityIndexMeasure``."""

from types import ModuleType
from typing import Tuple

from .metrics import image_pansharpening, image_window
from .metrics.image_pansharpening import *  # noqa: F401,F403  (SpectralDistortionIndex, SpatialDistortionIndex, QualityWithNoReference)
from .metrics.image_window import *  # noqa: F401,F403  (UniversalImageQualityIndex, RMSE-SW, RASE, SCC)

_MODULES: Tuple[ModuleType, ...] = ()
_MODULES += (image_window, image_pansharpening)

__all__ = [name for module in _MODULES for name in module.__all__]
