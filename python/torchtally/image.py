"""torchmetrics.image's place: ``from torchtally.image import StructuralSimilarityIndexMeasure``."""

from types import ModuleType
from typing import Tuple

from .metrics import image_ssim, image_vif
from .metrics.image_ssim import *  # noqa: F401,F403
from .metrics.image_vif import *  # noqa: F401,F403

_MODULES: Tuple[ModuleType, ...] = (image_ssim, image_vif)

__all__ = [name for module in _MODULES for name in module.__all__]
