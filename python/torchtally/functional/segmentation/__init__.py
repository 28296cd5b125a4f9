"""Segmentation: the public functions (torchmetrics.functional.segmentation's names and signatures)."""

from typing import List

__all__: List[str] = []
