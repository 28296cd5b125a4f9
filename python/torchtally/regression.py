"""torchmetrics.regression's place: ``from torchtally.regression import R2Score``."""

from .metrics import divergences, error_sums
from .metrics import regression as _regression
from .metrics.divergences import *  # noqa: F401,F403
from .metrics.error_sums import *  # noqa: F401,F403
from .metrics.regression import *  # noqa: F401,F403

__all__ = list(_regression.__all__) + list(error_sums.__all__) + list(divergences.__all__)
