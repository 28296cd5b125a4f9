"""torchmetrics.retrieval's place: ``from torchtally.retrieval import RetrievalMAP``."""

from types import ModuleType
from typing import Tuple

from .metrics import retrieval_curves, retrieval_queries
from .retrieval.precision_recall_curve import *  # noqa: F401,F403  (RetrievalAUROC, RetrievalPrecisionRecallCurve, ...)
from .retrieval.base import *  # noqa: F401,F403  (RetrievalMAP, RetrievalMRR, RetrievalNormalizedDCG, ...)

_MODULES: Tuple[ModuleType, ...] = (retrieval_queries, retrieval_curves)

__all__ = [name for module in _MODULES for name in module.__all__]
