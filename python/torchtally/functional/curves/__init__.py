"""Curves and ranking (AUROC, average precision, ROC, precision-recall curves): the public
functions in forms.py; the per-batch state update in update.py, results from states in compute.py.
Their readouts (EER, LogAUC, precision at fixed recall, ...): readouts.py, with the public
functions in readout_forms.py and readout_task_forms.py.
"""

from ..classification import precision_recall_curve as forms
from ..classification import eer as readout_forms
from ..classification import logauc as readout_task_forms
from ..classification.precision_recall_curve import *  # noqa: F401,F403
from ..classification.eer import *  # noqa: F401,F403
from ..classification.logauc import *  # noqa: F401,F403

__all__ = list(forms.__all__) + list(readout_forms.__all__) + list(readout_task_forms.__all__)
