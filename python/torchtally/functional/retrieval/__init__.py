"""Retrieval: the public functions (torchmetrics.functional.retrieval's names and signatures).

Each takes one query's scores and relevances and returns its value, computed by the same per-query
scorers as the classes in torchtally.retrieval; one module per metric (average_precision.py, ...,
auroc.py, precision_recall_curve.py). update.py holds the checks and the documents' rows; compute.py
the grouping by query, empty queries and aggregation; curves.py the curve metrics.
"""

from .auroc import retrieval_auroc
from .average_precision import retrieval_average_precision
from .fall_out import retrieval_fall_out
from .hit_rate import retrieval_hit_rate
from .ndcg import retrieval_normalized_dcg
from .precision import retrieval_precision
from .precision_recall_curve import retrieval_precision_recall_curve
from .r_precision import retrieval_r_precision
from .recall import retrieval_recall
from .reciprocal_rank import retrieval_reciprocal_rank

__all__ = [
    "retrieval_auroc",
    "retrieval_average_precision",
    "retrieval_fall_out",
    "retrieval_hit_rate",
    "retrieval_normalized_dcg",
    "retrieval_precision",
    "retrieval_precision_recall_curve",
    "retrieval_r_precision",
    "retrieval_recall",
    "retrieval_reciprocal_rank",
]
