"""torchmetrics.regression's place: ``from torchtally.regression import R2Score``."""

from .metrics.regression import *  # noqa: F401,F403
from .metrics.regression import __all__  # noqa: F401
