"""ignite's idiom on torchtally's own objects: ``metric.attach(engine, "acc")``,
``metric.detach(engine)``, ``metric.is_attached(engine)``, for a Metric and a MetricCollection.

Each method is torchtally.adapters.ignite's function of the same name (reset at the epoch's
start, update every iteration, sync and compute at its end; a DistributedSampler's padding
dropped). ignite is an optional dependency and the adapters sit above the base layer, so the
adapter is imported inside each method, when it is called (as torchmetrics' ``plot()`` imports
matplotlib); importing torchtally never imports ignite.
"""
from typing import Any, Optional


class Attachable:
    """Mixin of Metric and MetricCollection: ignite's ``attach`` / ``detach`` / ``is_attached``."""

    def attach(self, engine: Any, name: str, usage: Any = "epoch_wise", **options: Any) -> Any:
        """Attach to an ignite ``Engine`` under ``name``, as ``ignite.metrics.Metric.attach``:
        ``usage`` is ``"epoch_wise"`` (default), ``"batch_wise"``, ``"running"`` or one of
        ignite's usage objects (``EpochWise()``, ``BatchWise()``, ...). ``options`` are those
        of torchtally.adapters.ignite.attach (``output_transform``, ``every``, ``model``,
        ``device``); the result lands in ``engine.state.metrics[name]``. Returns the hook that
        drives this object.

            >>> from ignite.engine import Engine
            >>> from torchtally.classification import MulticlassAccuracy
            >>> import torch
            >>> evaluator = Engine(lambda engine, batch: batch)
            >>> hook = MulticlassAccuracy(num_classes=3, average="micro").attach(evaluator, "acc")
            >>> batches = [(torch.tensor([0, 2, 1]), torch.tensor([0, 1, 1]))]
            >>> evaluator.run(batches).metrics["acc"]  # doctest: +ELLIPSIS
            0.666...
        """
        from ..adapters import ignite

        return ignite.attach(self, engine, name, usage, **options)

    def detach(self, engine: Any, usage: Optional[Any] = None) -> None:
        """Remove this object's handlers from ``engine``: every attachment of it, or only those
        of ``usage`` (as ignite's ``detach(engine, usage)``). Results stay in
        ``engine.state.metrics``."""
        from ..adapters import ignite

        for name in ignite.attached_names(engine, self, usage):
            ignite.detach(engine, name)

    def is_attached(self, engine: Any, usage: Optional[Any] = None) -> bool:
        """Whether this object is attached to ``engine`` (with ``usage``, when given)."""
        from ..adapters import ignite

        return bool(ignite.attached_names(engine, self, usage))
