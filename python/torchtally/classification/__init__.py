"""torchmetrics.classification's place: the classification metric classes, curves included.

``from torchtally.classification import MulticlassAccuracy`` works as the torchmetrics import
does. Metrics of one task with the same state options share their state in a MetricCollection:
one kernel call per batch, one slot in the sync.
"""

from types import ModuleType
from typing import Tuple

from .metrics import (
    calibration,
    confusion_matrix,
    curve_operating_points,
    curve_readout_tasks,
    curve_readouts,
    curve_tasks,
    curves,
    exact_match,
    fairness,
    hinge,
    precision_recall,
    ranking,
    score_tasks,
    stat_scores,
    tasks,
)
from .classification.calibration_error import *  # noqa: F401,F403  (BinaryCalibrationError, MulticlassCalibrationError)
from .classification.confusion_matrix import *  # noqa: F401,F403  (ConfusionMatrix, JaccardIndex, MCC, CohenKappa)
from .classification.precision_fixed_recall import *  # noqa: F401,F403  (BinaryPrecisionAtFixedRecall, ...)
from .classification.logauc import *  # noqa: F401,F403  (EER(task=...), LogAUC(task=...), ...)
from .classification.eer import *  # noqa: F401,F403  (BinaryEER, BinaryLogAUC, ...)
from .classification.auroc import *  # noqa: F401,F403  (AUROC(task=...), AveragePrecision(task=...), ...)
from .classification.precision_recall_curve import *  # noqa: F401,F403  (BinaryAUROC, ..., the curves and their readouts)
from .classification.exact_match import *  # noqa: F401,F403  (MulticlassExactMatch, MultilabelExactMatch, ExactMatch)
from .classification.group_fairness import *  # noqa: F401,F403  (BinaryFairness, BinaryGroupStatRates)
from .classification.hinge import *  # noqa: F401,F403  (BinaryHingeLoss, MulticlassHingeLoss)
from .classification.precision_recall import *  # noqa: F401,F403  (Precision, Recall, FBetaScore, F1Score, Dice)
from .classification.ranking import *  # noqa: F401,F403  (MultilabelCoverageError, MultilabelRanking*)
from .classification.calibration_error_task import *  # noqa: F401,F403  (HingeLoss(task=...), CalibrationError(task=...))
from .classification.stat_scores import *  # noqa: F401,F403  (StatScores, Accuracy, HammingDistance, Specificity)
from .classification.accuracy import *  # noqa: F401,F403  (Accuracy(task=...), Precision(task=...), ...)

# the modules whose classes this face exports, in the order of its listing
_MODULES: Tuple[ModuleType, ...] = (stat_scores, precision_recall, confusion_matrix, tasks, curves, curve_tasks)
_MODULES += (curve_readouts, curve_operating_points, curve_readout_tasks)
_MODULES += (hinge, calibration, ranking, score_tasks, exact_match, fairness)
__all__ = [name for module in _MODULES for name in module.__all__]
