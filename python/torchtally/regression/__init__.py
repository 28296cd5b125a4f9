"""torchmetrics.regression's place: ``from torchtally.regression import R2Score``."""

from .metrics import divergences, error_sums, rank_regression, regression
from .regression.kl_divergence import *  # noqa: F401,F403  (KLDivergence, JensenShannonDivergence, CriticalSuccessIndex)
from .regression.log_mse import *  # noqa: F401,F403  (LogCoshError, MeanSquaredLogError, ...)
from .regression.spearman import *  # noqa: F401,F403  (SpearmanCorrCoef, KendallRankCorrCoef, CRPS)
from .regression.mse import *  # noqa: F401,F403

__all__ = [name for module in (regression, error_sums, divergences, rank_regression) for name in module.__all__]
