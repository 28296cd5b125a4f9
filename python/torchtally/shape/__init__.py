"""torchmetrics.shape's place: ``from torchtally.shape import ProcrustesDisparity``."""

from .procrustes import ProcrustesDisparity

__all__ = ["ProcrustesDisparity"]
