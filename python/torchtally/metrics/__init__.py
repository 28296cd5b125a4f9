"""Metric classes (names and options follow torchmetrics)."""

from .classification import *  # noqa: F401,F403  (Binary/Multiclass/Multilabel Accuracy, Precision, ...)
from .curves import *  # noqa: F401,F403  (AUROC, AveragePrecision, ROC, PrecisionRecallCurve)
from .aggregation import AverageLoss, CatMetric, MaxMetric, MeanMetric, MinMetric, RunningMean, SumMetric  # noqa: F401
from .regression import (  # noqa: F401
    CosineSimilarity,
    ExplainedVariance,
    MeanAbsoluteError,
    MeanAbsolutePercentageError,
    MeanSquaredError,
    PearsonCorrCoef,
    R2Score,
)
