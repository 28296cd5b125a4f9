"""Classification metric classes (names and options as torchmetrics'), all on the confusion-matrix
and top-k kernels. Metrics of one task with the same state options share their state in a
MetricCollection: one kernel call per batch, one slot in the sync. The task wrappers
(``Accuracy(task=...)``, ...) come from classification_tasks."""
from .classification_tasks import *  # noqa: F401,F403  (Accuracy, Precision, ... with task=)
from .classification_tasks import __all__ as _task_names
from .confusion_matrix import (  # noqa: F401
    BinaryCohenKappa,
    BinaryConfusionMatrix,
    BinaryJaccardIndex,
    BinaryMatthewsCorrCoef,
    MulticlassCohenKappa,
    MulticlassConfusionMatrix,
    MulticlassJaccardIndex,
    MulticlassMatthewsCorrCoef,
    MultilabelConfusionMatrix,
    MultilabelJaccardIndex,
    MultilabelMatthewsCorrCoef,
)
from .precision_recall import (  # noqa: F401
    BinaryDice,
    BinaryF1Score,
    BinaryFBetaScore,
    BinaryPrecision,
    BinaryRecall,
    MulticlassDice,
    MulticlassF1Score,
    MulticlassFBetaScore,
    MulticlassPrecision,
    MulticlassRecall,
    MultilabelDice,
    MultilabelF1Score,
    MultilabelFBetaScore,
    MultilabelPrecision,
    MultilabelRecall,
)
from .stat_scores import *  # noqa: F401,F403  (StatScores, Accuracy, HammingDistance, Specificity)

__all__ = [name for name in dir() if name.startswith(("Binary", "Multiclass", "Multilabel"))] + list(_task_names)
