"""Shape: the public functions (torchmetrics.functional.shape's names and signatures)."""

from .procrustes import procrustes_disparity

__all__ = ["procrustes_disparity"]
