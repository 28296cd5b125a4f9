"""torchmetrics.regression's place: ``from torchtally.regression import R2Score``."""

from .metrics import rank_regression, regression
from .metrics.rank_regression import *  # noqa: F401,F403  (SpearmanCorrCoef, KendallRankCorrCoef, CRPS)
from .metrics.regression import *  # noqa: F401,F403

__all__ = [name for module in (regression, rank_regression) for name in module.__all__]
