"""``torchtally.collections.MetricCollection``: under the module name torchmetrics gives it
(``torchmetrics.collections``); defined in torchtally.base.collection."""

from .base.collection import MetricCollection

__all__ = ["MetricCollection"]
