"""Regression: the public functions, one module per metric (mse.py, log_mse.py, spearman.py, ...;
per-batch sums of the error metrics in batch_sums.py); states and their per-batch update
in update.py, results from the states in compute.py, ranks.py (rank correlations) and ensemble.py
(the CRPS).
"""

from .concordance import concordance_corrcoef
from .cosine_similarity import cosine_similarity
from .crps import continuous_ranked_probability_score
from .csi import critical_success_index
from .explained_variance import explained_variance
from .js_divergence import jensen_shannon_divergence
from .kendall import kendall_rank_corrcoef
from .kl_divergence import kl_divergence
from .log_cosh import log_cosh_error
from .log_mse import mean_squared_log_error
from .mae import mean_absolute_error
from .mape import mean_absolute_percentage_error
from .minkowski import minkowski_distance
from .mse import mean_squared_error
from .nrmse import normalized_root_mean_squared_error
from .pearson import pearson_corrcoef
from .r2 import r2_score
from .rse import relative_squared_error
from .spearman import spearman_corrcoef
from .symmetric_mape import symmetric_mean_absolute_percentage_error
from .tweedie_deviance import tweedie_deviance_score
from .wmape import weighted_mean_absolute_percentage_error

__all__ = [
    "concordance_corrcoef",
    "cosine_similarity",
    "continuous_ranked_probability_score",
    "critical_success_index",
    "explained_variance",
    "jensen_shannon_divergence",
    "kendall_rank_corrcoef",
    "kl_divergence",
    "log_cosh_error",
    "mean_squared_log_error",
    "mean_absolute_error",
    "mean_absolute_percentage_error",
    "minkowski_distance",
    "mean_squared_error",
    "normalized_root_mean_squared_error",
    "pearson_corrcoef",
    "r2_score",
    "relative_squared_error",
    "spearman_corrcoef",
    "symmetric_mean_absolute_percentage_error",
    "tweedie_deviance_score",
    "weighted_mean_absolute_percentage_error",
]
