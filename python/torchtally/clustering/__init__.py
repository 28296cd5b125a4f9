"""torchmetrics.clustering's place: ``from torchtally.clustering import AdjustedRandScore``."""

from .adjusted_mutual_info_score import AdjustedMutualInfoScore
from .adjusted_rand_score import AdjustedRandScore
from .calinski_harabasz_score import CalinskiHarabaszScore
from .cluster_accuracy import ClusterAccuracy
from .davies_bouldin_score import DaviesBouldinScore
from .dunn_index import DunnIndex
from .fowlkes_mallows_index import FowlkesMallowsIndex
from .homogeneity_completeness_v_measure import CompletenessScore, HomogeneityScore, VMeasureScore
from .mutual_info_score import MutualInfoScore
from .normalized_mutual_info_score import NormalizedMutualInfoScore
from .rand_score import RandScore

__all__ = [
    "AdjustedMutualInfoScore",
    "AdjustedRandScore",
    "CalinskiHarabaszScore",
    "ClusterAccuracy",
    "CompletenessScore",
    "DaviesBouldinScore",
    "DunnIndex",
    "FowlkesMallowsIndex",
    "HomogeneityScore",
    "MutualInfoScore",
    "NormalizedMutualInfoScore",
    "RandScore",
    "VMeasureScore",
]
