"""Regression: the public functions in forms.py, error_forms.py (per-batch sums of the latter in
batch_sums.py) and rank_forms.py (the ones that rank or sort); states and their per-batch update
in update.py, results from the states in compute.py, ranks.py (rank correlations) and ensemble.py
(the CRPS).
"""

from . import log_mse as error_forms
from . import mse as forms
from . import spearman as rank_forms
from .log_mse import *  # noqa: F401,F403
from .mse import *  # noqa: F401,F403
from .spearman import *  # noqa: F401,F403

__all__ = list(forms.__all__) + list(error_forms.__all__) + list(rank_forms.__all__)
