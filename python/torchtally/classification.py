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
from .metrics.calibration import *  # noqa: F401,F403  (BinaryCalibrationError, MulticlassCalibrationError)
from .metrics.confusion_matrix import *  # noqa: F401,F403  (ConfusionMatrix, JaccardIndex, MCC, CohenKappa)
from .metrics.curve_operating_points import *  # noqa: F401,F403  (BinaryPrecisionAtFixedRecall, ...)
from .metrics.curve_readout_tasks import *  # noqa: F401,F403  (EER(task=...), LogAUC(task=...), ...)
from .metrics.curve_readouts import *  # noqa: F401,F403  (BinaryEER, BinaryLogAUC, ...)
from .metrics.curve_tasks import *  # noqa: F401,F403  (AUROC(task=...), AveragePrecision(task=...), ...)
from .metrics.curves import *  # noqa: F401,F403  (BinaryAUROC, ..., the curves and their readouts)
from .metrics.exact_match import *  # noqa: F401,F403  (MulticlassExactMatch, MultilabelExactMatch, ExactMatch)
from .metrics.fairness import *  # noqa: F401,F403  (BinaryFairness, BinaryGroupStatRates)
from .metrics.hinge import *  # noqa: F401,F403  (BinaryHingeLoss, MulticlassHingeLoss)
from .metrics.precision_recall import *  # noqa: F401,F403  (Precision, Recall, FBetaScore, F1Score, Dice)
from .metrics.ranking import *  # noqa: F401,F403  (MultilabelCoverageError, MultilabelRanking*)
from .metrics.score_tasks import *  # noqa: F401,F403  (HingeLoss(task=...), CalibrationError(task=...))
from .metrics.stat_scores import *  # noqa: F401,F403  (StatScores, Accuracy, HammingDistance, Specificity)
from .metrics.tasks import *  # noqa: F401,F403  (Accuracy(task=...), Precision(task=...), ...)

# the modules whose classes this face exports, in the order of its listing
_MODULES: Tuple[ModuleType, ...] = (stat_scores, precision_recall, confusion_matrix, tasks, curves, curve_tasks)
_MODULES += (curve_readouts, curve_operating_points, curve_readout_tasks)
_MODULES += (hinge, calibration, ranking, score_tasks, exact_match, fairness)
__all__ = [name for module in _MODULES for name in module.__all__]
