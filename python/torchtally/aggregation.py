"""torchmetrics.aggregation's place: ``from torchtally.aggregation import MeanMetric``."""

from .metrics.aggregation import *  # noqa: F401,F403
from .metrics.aggregation import __all__  # noqa: F401
