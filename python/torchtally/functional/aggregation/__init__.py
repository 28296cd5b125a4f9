"""Aggregation: the public functions in forms.py; the value and weight checks and the NaN
policy, shared with the metric classes, in update.py.
"""

from .forms import weighted_mean, weighted_sum
from .update import NaNValueError  # noqa: F401  (raised by every form here)

__all__ = ["weighted_mean", "weighted_sum"]
