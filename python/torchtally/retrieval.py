"""torchmetrics.retrieval's place: ``from torchtally.retrieval import RetrievalMAP``."""

from types import ModuleType
from typing import Tuple

from .metrics import retrieval
from .metrics.retrieval import *  # noqa: F401,F403  (RetrievalMAP, RetrievalMRR, RetrievalNormalizedDCG, ...)

_MODULES: Tuple[ModuleType, ...] = (retrieval,)

__all__ = [name for module in _MODULES for name in module.__all__]
