"""Adapters that drive :class:`torchtally.MetricHook` from training engines.

``torchtally.adapters.ignite``: ``attach(metric, engine, name, usage=...)`` for pytorch-ignite.
``torchtally.adapters.lightning``: ``MetricCallback`` for Lightning.
``torchtally.adapters.avalanche``: plugin metrics for Avalanche's ``EvaluationPlugin``.
Each imports its engine lazily: import the submodule you need.
"""
