"""``torchtally.metric.Metric``: the base class under the module name torchmetrics gives it
(``torchmetrics.metric``); defined in torchtally.base.metric."""

from .base.metric import Metric

__all__ = ["Metric"]
