"""ignite's idiom on torchtally's own objects: ``metric.attach(engine, "acc")``,
``metric.detach(engine)``, ``metric.is_attached(engine)``, for a Metric and a MetricCollection.

Each method is torchtally.adapters.ignite's function of the same name (reset at the epoch's
start, update every iteration, sync and compute at its end; a DistributedSampler's padding
dropped). ignite is an optional dependency and the adapters sit above the base layer, so the
adapter is imported inside each method, when it is called (as torchmetrics' ``plot()`` imports
matplotlib); importing torchtally never imports ignite. So these names are taken: a
MetricCollection's keys cannot be ``attach``, ``detach`` or ``is_attached`` (nn.Module refuses
a submodule named like an attribute).
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
        drives this object. One object is attached to an engine once (a second name raises
        ValueError: two hooks would count every sample twice); attach a ``clone()`` instead.

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
        """Remove this object's handlers from ``engine``: only those of ``usage`` when given (as
        ignite's ``detach(engine, usage)``), every attachment of it when None. The default
        differs from ignite's (``EpochWise()``) on purpose: torchtally knows under which usage
        an object was attached, so ``detach(engine)`` undoes ``attach(engine, name, usage)``
        whatever the usage. Results stay in ``engine.state.metrics``."""
        from ..adapters import ignite

        for name in ignite.attached_names(engine, self, usage):
            ignite.detach(engine, name)

    def is_attached(self, engine: Any, usage: Optional[Any] = None) -> bool:
        """Whether this object is attached to ``engine``: with ``usage`` when given, with any
        usage when None (ignite's default is ``EpochWise()``; see ``detach``)."""
        from ..adapters import ignite

        return bool(ignite.attached_names(engine, self, usage))
