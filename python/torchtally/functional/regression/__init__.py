"""Regression: the public functions in forms.py and error_forms.py (per-batch sums of the
latter in batch_sums.py); states and their per-batch update in
update.py, results from the states in compute.py.
"""

from . import error_forms, forms
from .error_forms import *  # noqa: F401,F403
from .forms import *  # noqa: F401,F403

__all__ = list(forms.__all__) + list(error_forms.__all__)
