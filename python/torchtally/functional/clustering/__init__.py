"""torchmetrics.functional.clustering's place: ``from torchtally.functional.clustering import
adjusted_rand_score``."""

from .adjusted_mutual_info_score import adjusted_mutual_info_score
from .adjusted_rand_score import adjusted_rand_score
from .calinski_harabasz_score import calinski_harabasz_score
from .cluster_accuracy import cluster_accuracy
from .davies_bouldin_score import davies_bouldin_score
from .dunn_index import dunn_index
from .fowlkes_mallows_index import fowlkes_mallows_index
from .homogeneity_completeness_v_measure import completeness_score, homogeneity_score, v_measure_score
from .mutual_info_score import mutual_info_score
from .normalized_mutual_info_score import normalized_mutual_info_score
from .rand_score import rand_score

__all__ = [
    "adjusted_mutual_info_score",
    "adjusted_rand_score",
    "calinski_harabasz_score",
    "cluster_accuracy",
    "completeness_score",
    "davies_bouldin_score",
    "dunn_index",
    "fowlkes_mallows_index",
    "homogeneity_score",
    "mutual_info_score",
    "normalized_mutual_info_score",
    "rand_score",
    "v_measure_score",
]
