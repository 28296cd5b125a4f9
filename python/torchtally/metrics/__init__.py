"""Metric classes (names and options follow torchmetrics)."""

from .classification import *  # noqa: F401,F403  (Binary/Multiclass/Multilabel Accuracy, Precision, ...)
