"""torchmetrics.retrieval's place: ``from torchtally.retrieval import RetrievalMAP``."""

from .auroc import RetrievalAUROC
from .average_precision import RetrievalMAP
from .fall_out import RetrievalFallOut
from .hit_rate import RetrievalHitRate
from .ndcg import RetrievalNormalizedDCG
from .precision import RetrievalPrecision
from .precision_recall_curve import RetrievalPrecisionRecallCurve, RetrievalRecallAtFixedPrecision
from .r_precision import RetrievalRPrecision
from .recall import RetrievalRecall
from .reciprocal_rank import RetrievalMRR

__all__ = [
    "RetrievalAUROC",
    "RetrievalMAP",
    "RetrievalFallOut",
    "RetrievalHitRate",
    "RetrievalNormalizedDCG",
    "RetrievalPrecision",
    "RetrievalPrecisionRecallCurve",
    "RetrievalRecallAtFixedPrecision",
    "RetrievalRPrecision",
    "RetrievalRecall",
    "RetrievalMRR",
]
