"""Curves and ranking (AUROC, average precision, ROC, precision-recall curves): the public
functions in forms.py; the per-batch state update in update.py, results from states in compute.py.
"""

from . import forms
from .forms import *  # noqa: F401,F403

__all__ = list(forms.__all__)
