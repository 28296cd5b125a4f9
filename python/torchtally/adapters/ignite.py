"""pytorch-ignite adapter: attach a torchtally metric (or collection) to an ``Engine``.

The events follow ignite's usages: epoch-wise (EPOCH_STARTED reset, ITERATION_COMPLETED
update, EPOCH_COMPLETED sync + compute), batch-wise (all three within ITERATION_COMPLETED)
and running (sync every ``every`` iterations). Results land in ``engine.state.metrics`` as
ignite's own metrics do: a 0-dim tensor becomes a Python number, a dict result is stored
under ``name`` and also flattened into its keys. The loader being run is read from
``engine.state.dataloader`` at every epoch start, so DistributedSampler padding is dropped,
also for loaders made by ``ignite.distributed.auto_dataloader``.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any, Callable, Dict, List, Optional, Tuple, Union

import torch
from ignite.engine import Engine, Events

from .hook import MetricHook, Usage, resolve_usage
from .sampler import SamplerWarning

__all__ = ["attach", "detach", "is_attached", "attached_names"]

_HANDLERS = "_torchtally_handlers"


def _to_state_value(value: Any) -> Any:
    if isinstance(value, torch.Tensor):
        return value.item() if value.dim() == 0 else value.cpu()
    return value


def _publish(engine: Engine, name: str, result: Any) -> None:
    if isinstance(result, Mapping):
        if name in result:
            raise ValueError(f"name: {name!r} collides with a key of the result {list(result)}")
        flat = {key: _to_state_value(value) for key, value in result.items()}
        engine.state.metrics.update(flat)
        engine.state.metrics[name] = flat
    else:
        engine.state.metrics[name] = _to_state_value(result)


def _epoch_started(engine: Engine, hook: MetricHook) -> None:
    loader = engine.state.dataloader
    hook.start_epoch(loader)
    if hook.layout is None or not hook.layout.pads:
        return
    try:
        one_pass = engine.state.epoch_length == len(loader)  # type: ignore[arg-type]  # no len: TypeError, caught
    except TypeError:
        one_pass = False
    if not one_pass:
        warnings.warn(
            f"epoch_length={engine.state.epoch_length} is not one pass over the loader, so "
            "epochs do not start at the sampler's first position; padding is not dropped",
            SamplerWarning,
            stacklevel=2,
        )
        hook.layout = None


def attach(
    metrics: Any,
    engine: Engine,
    name: str,
    usage: Union[str, Usage, Any] = "epoch_wise",
    *,
    output_transform: Optional[Callable[[Any], Any]] = None,
    every: int = 1,
    model: Optional[torch.nn.Module] = None,
    device: Optional[Union[str, torch.device]] = None,
) -> MetricHook:
    """Attach ``metrics`` to ``engine`` under ``name`` and return the driving hook.

    ``usage`` is ``"epoch_wise"`` (default), ``"batch_wise"``, ``"running"`` (with ``every``)
    or one of ignite's usage names/instances (``EpochWise()``, ``BatchWise()``,
    ``SingleEpochRunningBatchWise()``, ``RunningBatchWise()``). ``output_transform`` maps
    ``engine.state.output`` to ``(preds, target)`` (default: used as is; ignite's
    ``{"y_pred", "y"}`` dict works too).

    Example::

        from ignite.engine import create_supervised_evaluator
        from torchtally.adapters.ignite import attach

        evaluator = create_supervised_evaluator(model)
        attach(MulticlassAccuracy(num_classes=10), evaluator, "accuracy")
        evaluator.run(val_loader)        # a DistributedSampler's padding is dropped
        evaluator.state.metrics["accuracy"]   # the same number on every rank
    """
    if not isinstance(name, str):
        raise TypeError(f"name: expected a str, got {type(name).__name__}")
    elsewhere = [other for other in attached_names(engine, metrics) if other != name]
    if elsewhere:  # two hooks would reset and update one state: every sample counted twice
        raise ValueError(
            f"metrics: this {type(metrics).__name__} is already attached to this engine as {elsewhere[0]!r}; "
            "detach it first, or attach a copy (metric.clone()) under the second name"
        )
    hook = MetricHook(metrics, output_transform, usage=resolve_usage(usage, every), model=model, device=device)
    keys = hook.metrics.keys() if callable(getattr(hook.metrics, "keys", None)) else ()
    if name in keys:
        raise ValueError(f"name: {name!r} collides with a metric of the collection {list(keys)}")
    handlers: List[Tuple[Any, Callable[..., None]]] = []

    def add(event: Any, fn: Callable[..., None]) -> None:
        engine.add_event_handler(event, fn)
        handlers.append((event, fn))

    def on_started(_: Engine) -> None:
        hook.start_run()

    def on_epoch_started(eng: Engine) -> None:
        _epoch_started(eng, hook)

    def on_iteration_completed(eng: Engine) -> None:
        with torch.no_grad():
            hook.iteration_completed(eng.state.output)
        if hook.computed:
            _publish(eng, name, hook.result)

    def on_epoch_completed(eng: Engine) -> None:
        _publish(eng, name, hook.end_epoch())

    if not hook.usage.reset_each_epoch:
        add(Events.STARTED, on_started)
    add(Events.EPOCH_STARTED, on_epoch_started)
    add(Events.ITERATION_COMPLETED, on_iteration_completed)
    if hook.usage.name != "batch_wise":
        add(Events.EPOCH_COMPLETED, on_epoch_completed)
    registry: Dict[str, Tuple[MetricHook, list]] = engine.__dict__.setdefault(_HANDLERS, {})
    if name in registry:
        detach(engine, name)
    registry[name] = (hook, handlers)
    return hook


def detach(engine: Engine, name: str) -> None:
    """Remove the handlers that :func:`attach` added for ``name``; its result stays in
    ``engine.state.metrics``."""
    registry = engine.__dict__.get(_HANDLERS, {})
    if name not in registry:
        raise KeyError(f"name: no torchtally metric attached as {name!r}")
    _, handlers = registry.pop(name)
    for event, fn in handlers:
        if engine.has_event_handler(fn, event):
            engine.remove_event_handler(fn, event)


def is_attached(engine: Engine, name: str) -> bool:
    """True if :func:`attach` attached a metric under ``name`` (and it was not detached)."""
    return name in engine.__dict__.get(_HANDLERS, {})


def attached_names(engine: Engine, metrics: Any, usage: Optional[Any] = None) -> List[str]:
    """The names under which :func:`attach` attached this very ``metrics`` object to ``engine``
    (and was not detached), only those of ``usage`` when given (a name or ignite's usage object,
    as :func:`attach` takes it): what ``Metric.detach`` and ``Metric.is_attached`` look up."""
    wanted = None if usage is None else _usage_kind(resolve_usage(usage))
    registry: Dict[str, Tuple[MetricHook, list]] = engine.__dict__.get(_HANDLERS, {})
    return [
        name
        for name, (hook, _) in registry.items()
        if hook.metrics is metrics and (wanted is None or _usage_kind(hook.usage) == wanted)
    ]


def _usage_kind(usage: Usage) -> Tuple[str, bool]:
    # ignite's RunningBatchWise and SingleEpochRunningBatchWise differ only in when they reset
    return usage.name, usage.reset_each_epoch
