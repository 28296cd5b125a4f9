"""torchmetrics.text's place: ``from torchtally.text import WordErrorRate``."""

from types import ModuleType
from typing import Tuple

from .metrics import perplexity, rouge, squad
from .metrics.perplexity import *  # noqa: F401,F403  (Perplexity)
from .metrics.rouge import *  # noqa: F401,F403  (ROUGEScore)
from .metrics.squad import *  # noqa: F401,F403  (SQuAD)

_MODULES: Tuple[ModuleType, ...] = (rouge, squad, perplexity)

__all__ = [name for module in _MODULES for name in module.__all__]
