"""Functional classification metrics: one batch in, the metric out.

torchmetrics.functional.classification's names and signatures (same positional order and
defaults). Each function accumulates the batch into a fresh count state with the same kernels
and checks as the metric classes (torchtally.classification) and computes the same
result from it. Inputs (labels, probabilities or logits, float 0/1 targets, extra dims,
``multidim_average``, ``top_k``) and averaging follow torchmetrics; see
`update` and `compute` for the exact rules. The per-task functions are in `forms`, the task
forms (``accuracy(preds, target, task=...)``, ...) in `task_forms`; the curve functions
(``binary_auroc``, ...) are re-exported from `torchtally.functional.curves`, as torchmetrics'
module holds them too.

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

from .. import curves
from ..curves import *  # noqa: F401,F403  (binary_auroc, ..., as torchmetrics.functional.classification)
from . import hinge, ranking
from . import calibration_error as calibration
from . import group_fairness as fairness
from . import stat_scores as forms
from . import negative_predictive_value as npv_forms
from . import exact_match as subset_accuracy
from . import accuracy as task_forms
from .calibration_error import *  # noqa: F401,F403  (binary_calibration_error, ..., calibration_error)
from .group_fairness import *  # noqa: F401,F403  (binary_fairness, binary_groups_stat_rates, demographic_parity, ...)
from .stat_scores import *  # noqa: F401,F403
from .hinge import *  # noqa: F401,F403  (binary_hinge_loss, ..., hinge_loss)
from .negative_predictive_value import *  # noqa: F401,F403  (binary_negative_predictive_value, ..., negative_predictive_value)
from .ranking import *  # noqa: F401,F403  (multilabel_coverage_error, multilabel_ranking_*)
from .exact_match import *  # noqa: F401,F403  (multiclass_exact_match, multilabel_exact_match, exact_match)
from .accuracy import *  # noqa: F401,F403  (accuracy, precision, ... with task=)

__all__ = list(forms.__all__) + list(task_forms.__all__) + list(curves.__all__)
__all__ += list(calibration.__all__) + list(hinge.__all__) + list(ranking.__all__)
__all__ += list(npv_forms.__all__) + list(subset_accuracy.__all__) + list(fairness.__all__)
