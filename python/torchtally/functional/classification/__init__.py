"""Functional classification metrics: one batch in, the metric out.

torchmetrics.functional.classification's names and signatures (same positional order and
defaults). Each function accumulates the batch into a fresh count state with the same kernels
and checks as the metric classes (torchtally.classification) and computes the same
result from it. Inputs (labels, probabilities or logits, float 0/1 targets, extra dims,
``multidim_average``, ``top_k``) and averaging follow torchmetrics; see
`update` and `compute` for the exact rules. Each metric's per-task functions and its task
form (``accuracy(preds, target, task=...)``, ...) are in the module of torchmetrics' name
(`accuracy`, `f_beta`, `auroc`, ...; dispatch helpers in `task_dispatch`); the curve functions
(``binary_auroc``, ...) build on `torchtally.functional.curves`.

Deliberate differences from torchmetrics: bad input raises even with ``validate_args=False``
(ValueError naming the argument for an out-of-range or non-0/1 label, a float target holding
another value, NaN scores; torchmetrics raises RuntimeError, or returns a wrong number when
validation is off), and multiclass functions need ``num_classes`` (torchmetrics takes None with
``average="micro"``).

    >>> import torch
    >>> from torchtally.functional import multiclass_accuracy, binary_f1_score
    >>> preds = torch.tensor([[0.1, 0.8, 0.1], [0.7, 0.2, 0.1], [0.2, 0.3, 0.5], [0.6, 0.3, 0.1]])
    >>> target = torch.tensor([1, 0, 2, 2])
    >>> multiclass_accuracy(preds, target, 3, average="micro")
    tensor(0.7500)
    >>> binary_f1_score(torch.tensor([0.9, -2.0, 3.0]), torch.tensor([1, 0, 0]))  # logits
    tensor(0.6667)
"""

from .accuracy import accuracy, binary_accuracy, multiclass_accuracy, multilabel_accuracy
from .auroc import auroc, binary_auroc, multiclass_auroc, multilabel_auroc
from .average_precision import (
    average_precision,
    binary_average_precision,
    multiclass_average_precision,
    multilabel_average_precision,
)
from .calibration_error import binary_calibration_error, calibration_error, multiclass_calibration_error
from .cohen_kappa import binary_cohen_kappa, cohen_kappa, multiclass_cohen_kappa
from .confusion_matrix import (
    binary_confusion_matrix,
    confusion_matrix,
    multiclass_confusion_matrix,
    multilabel_confusion_matrix,
)
from .dice import binary_dice, multiclass_dice, multilabel_dice
from .eer import FprRange, Thresholds, binary_eer, eer, multiclass_eer, multilabel_eer
from .exact_match import exact_match, multiclass_exact_match, multilabel_exact_match
from .f_beta import (
    binary_f1_score,
    binary_fbeta_score,
    f1_score,
    fbeta_score,
    multiclass_f1_score,
    multiclass_fbeta_score,
    multilabel_f1_score,
    multilabel_fbeta_score,
)
from .group_fairness import binary_fairness, binary_groups_stat_rates, demographic_parity, equal_opportunity
from .hamming import binary_hamming_distance, hamming_distance, multiclass_hamming_distance, multilabel_hamming_distance
from .hinge import binary_hinge_loss, hinge_loss, multiclass_hinge_loss
from .jaccard import binary_jaccard_index, jaccard_index, multiclass_jaccard_index, multilabel_jaccard_index
from .logauc import binary_logauc, logauc, multiclass_logauc, multilabel_logauc
from .matthews_corrcoef import (
    binary_matthews_corrcoef,
    matthews_corrcoef,
    multiclass_matthews_corrcoef,
    multilabel_matthews_corrcoef,
)
from .negative_predictive_value import (
    binary_negative_predictive_value,
    multiclass_negative_predictive_value,
    multilabel_negative_predictive_value,
    negative_predictive_value,
)
from .precision_fixed_recall import (
    binary_precision_at_fixed_recall,
    multiclass_precision_at_fixed_recall,
    multilabel_precision_at_fixed_recall,
    precision_at_fixed_recall,
)
from .precision_recall import (
    binary_precision,
    binary_recall,
    multiclass_precision,
    multiclass_recall,
    multilabel_precision,
    multilabel_recall,
    precision,
    recall,
)
from .precision_recall_curve import (
    binary_precision_recall_curve,
    multiclass_precision_recall_curve,
    multilabel_precision_recall_curve,
    precision_recall_curve,
)
from .ranking import multilabel_coverage_error, multilabel_ranking_average_precision, multilabel_ranking_loss
from .recall_fixed_precision import (
    binary_recall_at_fixed_precision,
    multiclass_recall_at_fixed_precision,
    multilabel_recall_at_fixed_precision,
    recall_at_fixed_precision,
)
from .roc import binary_roc, multiclass_roc, multilabel_roc, roc
from .sensitivity_specificity import (
    binary_sensitivity_at_specificity,
    multiclass_sensitivity_at_specificity,
    multilabel_sensitivity_at_specificity,
    sensitivity_at_specificity,
)
from .specificity import binary_specificity, multiclass_specificity, multilabel_specificity, specificity
from .specificity_sensitivity import (
    binary_specificity_at_sensitivity,
    multiclass_specificity_at_sensitivity,
    multilabel_specificity_at_sensitivity,
    specificity_at_sensitivity,
)
from .stat_scores import binary_stat_scores, multiclass_stat_scores, multilabel_stat_scores, stat_scores

__all__ = [
    "accuracy",
    "binary_accuracy",
    "multiclass_accuracy",
    "multilabel_accuracy",
    "binary_auroc",
    "multiclass_auroc",
    "multilabel_auroc",
    "auroc",
    "binary_average_precision",
    "multiclass_average_precision",
    "multilabel_average_precision",
    "average_precision",
    "binary_calibration_error",
    "multiclass_calibration_error",
    "calibration_error",
    "cohen_kappa",
    "binary_cohen_kappa",
    "multiclass_cohen_kappa",
    "confusion_matrix",
    "binary_confusion_matrix",
    "multiclass_confusion_matrix",
    "multilabel_confusion_matrix",
    "binary_dice",
    "multiclass_dice",
    "multilabel_dice",
    "Thresholds",
    "FprRange",
    "binary_eer",
    "multiclass_eer",
    "multilabel_eer",
    "eer",
    "multiclass_exact_match",
    "multilabel_exact_match",
    "exact_match",
    "fbeta_score",
    "f1_score",
    "binary_fbeta_score",
    "multiclass_fbeta_score",
    "multilabel_fbeta_score",
    "binary_f1_score",
    "multiclass_f1_score",
    "multilabel_f1_score",
    "binary_fairness",
    "binary_groups_stat_rates",
    "demographic_parity",
    "equal_opportunity",
    "hamming_distance",
    "binary_hamming_distance",
    "multiclass_hamming_distance",
    "multilabel_hamming_distance",
    "binary_hinge_loss",
    "multiclass_hinge_loss",
    "hinge_loss",
    "jaccard_index",
    "binary_jaccard_index",
    "multiclass_jaccard_index",
    "multilabel_jaccard_index",
    "logauc",
    "binary_logauc",
    "multiclass_logauc",
    "multilabel_logauc",
    "matthews_corrcoef",
    "binary_matthews_corrcoef",
    "multiclass_matthews_corrcoef",
    "multilabel_matthews_corrcoef",
    "binary_negative_predictive_value",
    "multiclass_negative_predictive_value",
    "multilabel_negative_predictive_value",
    "negative_predictive_value",
    "binary_precision_at_fixed_recall",
    "multiclass_precision_at_fixed_recall",
    "multilabel_precision_at_fixed_recall",
    "precision_at_fixed_recall",
    "precision",
    "recall",
    "binary_precision",
    "multiclass_precision",
    "multilabel_precision",
    "binary_recall",
    "multiclass_recall",
    "multilabel_recall",
    "binary_precision_recall_curve",
    "multiclass_precision_recall_curve",
    "multilabel_precision_recall_curve",
    "precision_recall_curve",
    "multilabel_coverage_error",
    "multilabel_ranking_average_precision",
    "multilabel_ranking_loss",
    "binary_recall_at_fixed_precision",
    "multiclass_recall_at_fixed_precision",
    "multilabel_recall_at_fixed_precision",
    "recall_at_fixed_precision",
    "binary_roc",
    "multiclass_roc",
    "multilabel_roc",
    "roc",
    "binary_sensitivity_at_specificity",
    "multiclass_sensitivity_at_specificity",
    "multilabel_sensitivity_at_specificity",
    "sensitivity_at_specificity",
    "specificity",
    "binary_specificity",
    "multiclass_specificity",
    "multilabel_specificity",
    "binary_specificity_at_sensitivity",
    "multiclass_specificity_at_sensitivity",
    "multilabel_specificity_at_sensitivity",
    "specificity_at_sensitivity",
    "binary_stat_scores",
    "multiclass_stat_scores",
    "multilabel_stat_scores",
    "stat_scores",
]
