"""torchmetrics.text's place: ``from torchtally.text import WordErrorRate``."""

from types import ModuleType
from typing import Tuple

from .metrics import ngram
from .metrics.ngram import *  # noqa: F401,F403  (BLEUScore, SacreBLEUScore, CHRFScore)

_MODULES: Tuple[ModuleType, ...] = (ngram,)

__all__ = [name for module in _MODULES for name in module.__all__]
