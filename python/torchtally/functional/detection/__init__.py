"""Detection: the public functions (torchmetrics.functional.detection's names and signatures)."""

from typing import List

from .panoptic_forms import *  # noqa: F401,F403
from .panoptic_forms import __all__ as _panoptic_all

__all__: List[str] = []
__all__ += _panoptic_all
