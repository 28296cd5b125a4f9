"""torchmetrics.retrieval's place: ``from torchtally.retrieval import RetrievalMAP``."""

from types import ModuleType
from typing import Tuple

from .metrics import retrieval, retrieval_curves
from .metrics.retrieval import *  # noqa: F401,F403  (RetrievalMAP, RetrievalMRR, RetrievalNormalizedDCG, ...)
from .metrics.retrieval_curves import *  # noqa: F401,F403  (RetrievalAUROC, RetrievalPrecisionRecallCurve, ...)

_MODULES: Tuple[ModuleType, ...] = (retrieval, retrieval_curves)

__all__ = [name for module in _MODULES for name in module.__all__]
