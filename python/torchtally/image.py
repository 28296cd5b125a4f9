"""torchmetrics.image's place: ``from torchtally.image import StructuralSimilarityIndexMeasure``."""

from types import ModuleType
from typing import Tuple

from .metrics import image_fid, image_kid_is
from .metrics.image_fid import *  # noqa: F403
from .metrics.image_kid_is import *  # noqa: F403

_MODULES: Tuple[ModuleType, ...] = (image_fid, image_kid_is)

__all__ = [name for module in _MODULES for name in module.__all__]
