"""Regression: the public functions in forms.py; states and their per-batch update in
update.py, results from the states in compute.py.
"""

from . import forms
from .forms import *  # noqa: F401,F403

__all__ = list(forms.__all__)
