"""torchmetrics.image's place: ``from torchtally.image import StructuralSimilarityIndexMeasure``."""

from types import ModuleType
from typing import Tuple

from .metrics import image_gradients, image_psnr, image_spectral
from .metrics.image_gradients import *  # noqa: F401,F403  (TotalVariation)
from .metrics.image_psnr import *  # noqa: F401,F403  (PeakSignalNoiseRatio, PeakSignalNoiseRatioWithBlockedEffect)
from .metrics.image_spectral import *  # noqa: F401,F403  (SpectralAngleMapper, ErrorRelativeGlobalDimensionlessSynthesis)

_MODULES: Tuple[ModuleType, ...] = (image_psnr, image_gradients, image_spectral)

__all__ = [name for module in _MODULES for name in module.__all__]
