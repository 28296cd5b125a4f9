"""Functional metrics. The kernels behind them are routed in `_kernels` (C core or torch reference)."""

from .classification import *  # noqa: F401,F403  (binary_/multiclass_/multilabel_ accuracy, precision, ...)
from .regression import (  # noqa: F401
    cosine_similarity,
    explained_variance,
    mean_absolute_error,
    mean_absolute_percentage_error,
    mean_squared_error,
    pearson_corrcoef,
    r2_score,
)
from .curves import (  # noqa: F401
    binary_auroc,
    binary_average_precision,
    binary_precision_recall_curve,
    binary_roc,
    multiclass_auroc,
    multiclass_average_precision,
    multiclass_precision_recall_curve,
    multiclass_roc,
    multilabel_auroc,
    multilabel_average_precision,
    multilabel_precision_recall_curve,
    multilabel_roc,
)
from .aggregation import weighted_mean, weighted_sum  # noqa: F401
