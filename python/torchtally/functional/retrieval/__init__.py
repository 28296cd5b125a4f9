"""Retrieval: the public functions (torchmetrics.functional.retrieval's names and signatures).

Each takes one query's scores and relevances and returns its value, computed by the same per-query
scorers as the classes in torchtally.retrieval. forms.py and curve_forms.py hold them; update.py the checks and the
documents' rows; compute.py the grouping by query, empty queries and aggregation; curves.py the curve metrics.
"""

from typing import List

from . import auroc as curve_forms
from . import average_precision as forms
from .auroc import *  # noqa: F401,F403
from .average_precision import *  # noqa: F401,F403

__all__: List[str] = list(forms.__all__) + list(curve_forms.__all__)
