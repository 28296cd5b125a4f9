"""torchmetrics.classification's place: the classification metric classes, curves included.

``from torchtally.classification import MulticlassAccuracy`` works as the torchmetrics import does.
"""
from .metrics.classification import *  # noqa: F401,F403
from .metrics.classification import __all__ as _counts
from .metrics.curves import *  # noqa: F401,F403
from .metrics.curves import __all__ as _curves

__all__ = list(_counts) + list(_curves)
