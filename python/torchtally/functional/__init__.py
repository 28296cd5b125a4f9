"""Functional metrics. The kernels behind them are routed in `_kernels` (C core or torch reference)."""
