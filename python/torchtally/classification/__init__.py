"""torchmetrics.classification's place: the classification metric classes, curves included.

``from torchtally.classification import MulticlassAccuracy`` works as the torchmetrics import
does. Metrics of one task with the same state options share their state in a MetricCollection:
one kernel call per batch, one slot in the sync.
"""

from .accuracy import Accuracy, BinaryAccuracy, MulticlassAccuracy, MultilabelAccuracy
from .auroc import AUROC, BinaryAUROC, MulticlassAUROC, MultilabelAUROC
from .average_precision import (
    AveragePrecision,
    BinaryAveragePrecision,
    MulticlassAveragePrecision,
    MultilabelAveragePrecision,
)
from .calibration_error import BinaryCalibrationError, CalibrationError, MulticlassCalibrationError
from .cohen_kappa import BinaryCohenKappa, CohenKappa, MulticlassCohenKappa
from .confusion_matrix import (
    BinaryConfusionMatrix,
    ConfusionMatrix,
    MulticlassConfusionMatrix,
    MultilabelConfusionMatrix,
)
from .dice import BinaryDice, MulticlassDice, MultilabelDice
from .eer import EER, BinaryEER, MulticlassEER, MultilabelEER
from .exact_match import ExactMatch, MulticlassExactMatch, MultilabelExactMatch
from .f_beta import (
    BinaryF1Score,
    BinaryFBetaScore,
    F1Score,
    FBetaScore,
    MulticlassF1Score,
    MulticlassFBetaScore,
    MultilabelF1Score,
    MultilabelFBetaScore,
)
from .group_fairness import BinaryFairness, BinaryGroupStatRates
from .hamming import BinaryHammingDistance, HammingDistance, MulticlassHammingDistance, MultilabelHammingDistance
from .hinge import BinaryHingeLoss, HingeLoss, MulticlassHingeLoss
from .jaccard import BinaryJaccardIndex, JaccardIndex, MulticlassJaccardIndex, MultilabelJaccardIndex
from .logauc import BinaryLogAUC, LogAUC, MulticlassLogAUC, MultilabelLogAUC
from .matthews_corrcoef import (
    BinaryMatthewsCorrCoef,
    MatthewsCorrCoef,
    MulticlassMatthewsCorrCoef,
    MultilabelMatthewsCorrCoef,
)
from .negative_predictive_value import (
    BinaryNegativePredictiveValue,
    MulticlassNegativePredictiveValue,
    MultilabelNegativePredictiveValue,
    NegativePredictiveValue,
)
from .precision_fixed_recall import (
    BinaryPrecisionAtFixedRecall,
    MulticlassPrecisionAtFixedRecall,
    MultilabelPrecisionAtFixedRecall,
    PrecisionAtFixedRecall,
)
from .precision_recall import (
    BinaryPrecision,
    BinaryRecall,
    MulticlassPrecision,
    MulticlassRecall,
    MultilabelPrecision,
    MultilabelRecall,
    Precision,
    Recall,
)
from .precision_recall_curve import (
    BinaryPrecisionRecallCurve,
    MulticlassPrecisionRecallCurve,
    MultilabelPrecisionRecallCurve,
    PrecisionRecallCurve,
)
from .ranking import MultilabelCoverageError, MultilabelRankingAveragePrecision, MultilabelRankingLoss
from .recall_fixed_precision import (
    BinaryRecallAtFixedPrecision,
    MulticlassRecallAtFixedPrecision,
    MultilabelRecallAtFixedPrecision,
    RecallAtFixedPrecision,
)
from .roc import ROC, BinaryROC, MulticlassROC, MultilabelROC
from .sensitivity_specificity import (
    BinarySensitivityAtSpecificity,
    MulticlassSensitivityAtSpecificity,
    MultilabelSensitivityAtSpecificity,
    SensitivityAtSpecificity,
)
from .specificity import BinarySpecificity, MulticlassSpecificity, MultilabelSpecificity, Specificity
from .specificity_sensitivity import (
    BinarySpecificityAtSensitivity,
    MulticlassSpecificityAtSensitivity,
    MultilabelSpecificityAtSensitivity,
    SpecificityAtSensitivity,
)
from .stat_scores import BinaryStatScores, MulticlassStatScores, MultilabelStatScores, StatScores

__all__ = [
    "Accuracy",
    "BinaryAccuracy",
    "MulticlassAccuracy",
    "MultilabelAccuracy",
    "AUROC",
    "BinaryAUROC",
    "MulticlassAUROC",
    "MultilabelAUROC",
    "AveragePrecision",
    "BinaryAveragePrecision",
    "MulticlassAveragePrecision",
    "MultilabelAveragePrecision",
    "BinaryCalibrationError",
    "MulticlassCalibrationError",
    "CalibrationError",
    "CohenKappa",
    "BinaryCohenKappa",
    "MulticlassCohenKappa",
    "BinaryConfusionMatrix",
    "MulticlassConfusionMatrix",
    "MultilabelConfusionMatrix",
    "ConfusionMatrix",
    "BinaryDice",
    "MulticlassDice",
    "MultilabelDice",
    "BinaryEER",
    "MulticlassEER",
    "MultilabelEER",
    "EER",
    "MulticlassExactMatch",
    "MultilabelExactMatch",
    "ExactMatch",
    "FBetaScore",
    "F1Score",
    "BinaryFBetaScore",
    "MulticlassFBetaScore",
    "MultilabelFBetaScore",
    "BinaryF1Score",
    "MulticlassF1Score",
    "MultilabelF1Score",
    "BinaryGroupStatRates",
    "BinaryFairness",
    "HammingDistance",
    "BinaryHammingDistance",
    "MulticlassHammingDistance",
    "MultilabelHammingDistance",
    "BinaryHingeLoss",
    "MulticlassHingeLoss",
    "HingeLoss",
    "JaccardIndex",
    "BinaryJaccardIndex",
    "MulticlassJaccardIndex",
    "MultilabelJaccardIndex",
    "LogAUC",
    "BinaryLogAUC",
    "MulticlassLogAUC",
    "MultilabelLogAUC",
    "MatthewsCorrCoef",
    "BinaryMatthewsCorrCoef",
    "MulticlassMatthewsCorrCoef",
    "MultilabelMatthewsCorrCoef",
    "NegativePredictiveValue",
    "BinaryNegativePredictiveValue",
    "MulticlassNegativePredictiveValue",
    "MultilabelNegativePredictiveValue",
    "BinaryPrecisionAtFixedRecall",
    "MulticlassPrecisionAtFixedRecall",
    "MultilabelPrecisionAtFixedRecall",
    "PrecisionAtFixedRecall",
    "BinaryPrecision",
    "BinaryRecall",
    "MulticlassPrecision",
    "MulticlassRecall",
    "MultilabelPrecision",
    "MultilabelRecall",
    "Precision",
    "Recall",
    "BinaryPrecisionRecallCurve",
    "MulticlassPrecisionRecallCurve",
    "MultilabelPrecisionRecallCurve",
    "PrecisionRecallCurve",
    "MultilabelCoverageError",
    "MultilabelRankingAveragePrecision",
    "MultilabelRankingLoss",
    "RecallAtFixedPrecision",
    "BinaryRecallAtFixedPrecision",
    "MulticlassRecallAtFixedPrecision",
    "MultilabelRecallAtFixedPrecision",
    "ROC",
    "BinaryROC",
    "MulticlassROC",
    "MultilabelROC",
    "SensitivityAtSpecificity",
    "BinarySensitivityAtSpecificity",
    "MulticlassSensitivityAtSpecificity",
    "MultilabelSensitivityAtSpecificity",
    "Specificity",
    "BinarySpecificity",
    "MulticlassSpecificity",
    "MultilabelSpecificity",
    "SpecificityAtSensitivity",
    "BinarySpecificityAtSensitivity",
    "MulticlassSpecificityAtSensitivity",
    "MultilabelSpecificityAtSensitivity",
    "BinaryStatScores",
    "MulticlassStatScores",
    "MultilabelStatScores",
    "StatScores",
]
