"""torchmetrics.text's place: ``from torchtally.text import WordErrorRate``."""

from types import ModuleType
from typing import Tuple

from .metrics import text_edit
from .metrics.text_edit import *  # noqa: F401,F403

_MODULES: Tuple[ModuleType, ...] = (text_edit,)

__all__ = [name for module in _MODULES for name in module.__all__]
