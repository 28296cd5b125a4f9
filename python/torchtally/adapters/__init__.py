"""Adapters that drive :class:`torchtally.MetricHook` from training engines.

``torchtally.adapters.ignite``: ``attach(metric, engine, name, usage=...)`` for pytorch-ignite.
``torchtally.adapters.lightning``: ``MetricCallback`` for Lightning.
Each imports its engine lazily: import the submodule you need.
"""
