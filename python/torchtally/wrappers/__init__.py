"""torchmetrics.wrappers' place: ``from torchtally.wrappers import BootStrapper``."""

from .metrics.wrappers import *  # noqa: F401,F403
from .metrics.wrappers import __all__  # noqa: F401
