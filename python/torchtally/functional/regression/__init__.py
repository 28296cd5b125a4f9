"""Regression: the public functions in forms.py (and rank_forms.py: the ones that rank or
sort); states and their per-batch update in update.py, results from the states in compute.py,
ranks.py (rank correlations) and ensemble.py (the CRPS).
"""

from . import forms, rank_forms
from .forms import *  # noqa: F401,F403
from .rank_forms import *  # noqa: F401,F403

__all__ = list(forms.__all__) + list(rank_forms.__all__)
