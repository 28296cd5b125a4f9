"""Detection: the public functions (torchmetrics.functional.detection's names and signatures)."""

from typing import List

__all__: List[str] = []
