"""torchmetrics.text's place: ``from torchtally.text import WordErrorRate``."""

from types import ModuleType
from typing import Tuple

from .metrics import text_ter
from .metrics.text_ter import *  # noqa: F401,F403  (TranslationEditRate, ExtendedEditDistance)

_MODULES: Tuple[ModuleType, ...] = (text_ter,)

__all__ = [name for module in _MODULES for name in module.__all__]
