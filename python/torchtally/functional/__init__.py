"""Functional metrics. The kernels behind them are routed in `_kernels` (C core or torch reference)."""

from .classification import *  # noqa: F401,F403  (binary_/multiclass_/multilabel_ accuracy, precision, ...)
