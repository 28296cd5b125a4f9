"""Detection: the public functions (torchmetrics.functional.detection's names and signatures)."""

from typing import List

from .map import mean_average_precision

__all__: List[str] = ["mean_average_precision"]
