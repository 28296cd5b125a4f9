"""Aggregation: the public functions in forms.py; the value and weight checks and the NaN
policy, shared with the metric classes, in update.py.
"""

from . import forms
from .forms import *  # noqa: F401,F403
from .update import NaNValueError  # noqa: F401  (raised by every form here)

__all__ = list(forms.__all__)
