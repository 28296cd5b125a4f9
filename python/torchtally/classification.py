"""torchmetrics.classification's place: the classification metric classes, curves included.

``from torchtally.classification import MulticlassAccuracy`` works as the torchmetrics import
does. Metrics of one task with the same state options share their state in a MetricCollection:
one kernel call per batch, one slot in the sync.
"""

from .metrics import confusion_matrix, curve_tasks, curves, exact_match, fairness, precision_recall, stat_scores, tasks
from .metrics.confusion_matrix import *  # noqa: F401,F403  (ConfusionMatrix, JaccardIndex, MCC, CohenKappa)
from .metrics.curve_tasks import *  # noqa: F401,F403  (AUROC(task=...), AveragePrecision(task=...), ...)
from .metrics.curves import *  # noqa: F401,F403  (BinaryAUROC, ..., the curves and their readouts)
from .metrics.exact_match import *  # noqa: F401,F403  (MulticlassExactMatch, MultilabelExactMatch, ExactMatch)
from .metrics.fairness import *  # noqa: F401,F403  (BinaryFairness, BinaryGroupStatRates)
from .metrics.precision_recall import *  # noqa: F401,F403  (Precision, Recall, FBetaScore, F1Score, Dice)
from .metrics.stat_scores import *  # noqa: F401,F403  (StatScores, Accuracy, HammingDistance, Specificity)
from .metrics.tasks import *  # noqa: F401,F403  (Accuracy(task=...), Precision(task=...), ...)

__all__ = [
    name
    for module in (stat_scores, precision_recall, confusion_matrix, tasks, curves, curve_tasks)
    for name in module.__all__
]
__all__ += exact_match.__all__ + fairness.__all__
