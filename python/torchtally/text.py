"""torchmetrics.text's place: ``from torchtally.text import WordErrorRate``."""

from types import ModuleType
from typing import Tuple

from .metrics import bertscore, infolm
from .metrics.bertscore import *  # noqa: F401,F403
from .metrics.infolm import *  # noqa: F401,F403

_MODULES: Tuple[ModuleType, ...] = (bertscore, infolm)

__all__ = [name for module in _MODULES for name in module.__all__]
