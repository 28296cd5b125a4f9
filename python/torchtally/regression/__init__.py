"""torchmetrics.regression's place: ``from torchtally.regression import R2Score``."""

from .concordance import ConcordanceCorrCoef
from .cosine_similarity import CosineSimilarity
from .crps import ContinuousRankedProbabilityScore
from .csi import CriticalSuccessIndex
from .explained_variance import ExplainedVariance
from .js_divergence import JensenShannonDivergence
from .kendall import KendallRankCorrCoef
from .kl_divergence import KLDivergence
from .log_cosh import LogCoshError
from .log_mse import MeanSquaredLogError
from .mae import MeanAbsoluteError
from .mape import MeanAbsolutePercentageError
from .minkowski import MinkowskiDistance
from .mse import MeanSquaredError
from .nrmse import NormalizedRootMeanSquaredError
from .pearson import PearsonCorrCoef
from .r2 import R2Score
from .rse import RelativeSquaredError
from .spearman import SpearmanCorrCoef
from .symmetric_mape import SymmetricMeanAbsolutePercentageError
from .tweedie_deviance import TweedieDevianceScore
from .wmape import WeightedMeanAbsolutePercentageError

__all__ = [
    "ConcordanceCorrCoef",
    "CosineSimilarity",
    "ContinuousRankedProbabilityScore",
    "CriticalSuccessIndex",
    "ExplainedVariance",
    "JensenShannonDivergence",
    "KendallRankCorrCoef",
    "KLDivergence",
    "LogCoshError",
    "MeanSquaredLogError",
    "MeanAbsoluteError",
    "MeanAbsolutePercentageError",
    "MinkowskiDistance",
    "MeanSquaredError",
    "NormalizedRootMeanSquaredError",
    "PearsonCorrCoef",
    "R2Score",
    "RelativeSquaredError",
    "SpearmanCorrCoef",
    "SymmetricMeanAbsolutePercentageError",
    "TweedieDevianceScore",
    "WeightedMeanAbsolutePercentageError",
]
