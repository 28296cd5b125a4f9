"""An engine-agnostic metric hook: epoch started -> reset, iteration completed -> update
without DistributedSampler padding, epoch completed -> sync and compute on every rank.

The ignite and Lightning adapters (``torchtally.adapters``) only forward their events here;
a plain loop calls the same methods, most simply through :meth:`MetricHook.epoch`.

Padding: DistributedSampler (drop_last=False) gives some ranks one duplicate sample at the
end of their shard (see ``torchtally.adapters.sampler``). The hook counts the local positions it has
seen, so it knows which rows of a batch's outputs are duplicates and slices them off along
dim 0 before ``update``. Outputs must therefore keep one row per sample on dim 0 and come in
the sampler's order (one update per batch, batches in order). With any other sampler nothing
is dropped.
"""

from __future__ import annotations

import contextlib
import warnings
from dataclasses import dataclass
from typing import Any, Callable, Dict, Iterator, Mapping, Optional, Tuple, Union

import torch
import torch.distributed
from torch import nn
from torch.utils.data import RandomSampler, SequentialSampler

from ..base.collection import MetricCollection
from ..base.metric import Metric
from ..base.resume import checkpointer_state_dict, gather_from_ranks, pack_record, unpack_record
from .dataparallel import check_no_metrics_inside, is_metric_like, metric_device
from .sampler import (
    SamplerWarning,
    ShardLayout,
    UnpaddedDistributedSampler,
    find_distributed_sampler,
    shard_layout,
    warn_lost_samples,
)

__all__ = ["MetricHook", "Usage", "resolve_usage"]

OutputTransform = Callable[[Any], Any]


@dataclass(frozen=True)
class Usage:
    """When a hook resets, updates and computes.

    - ``epoch_wise``: reset at epoch start, update every iteration, sync + compute at epoch end.
    - ``batch_wise``: reset, update, sync + compute within every iteration.
    - ``running``: reset at epoch start (or once per run with ``reset_each_epoch=False``),
      update every iteration, sync + compute every ``every`` iterations and at epoch end.
    """

    name: str = "epoch_wise"
    every: int = 1
    reset_each_epoch: bool = True

    def __post_init__(self) -> None:
        if self.name not in ("epoch_wise", "batch_wise", "running"):
            raise ValueError(
                "usage: expected 'epoch_wise', 'batch_wise' or 'running' (or ignite's "
                f"'single_epoch_running_batch_wise' / 'running_batch_wise'), got {self.name!r}"
            )
        if not isinstance(self.every, int) or self.every < 1:
            raise ValueError(f"every: expected an int >= 1, got {self.every!r}")

    @property
    def syncs_per_iteration(self) -> bool:
        return self.name != "epoch_wise"


# ignite's usage names, mapped onto ours.
_IGNITE_NAMES = {"single_epoch_running_batch_wise": ("running", True), "running_batch_wise": ("running", False)}


def resolve_usage(usage: Union[str, Usage, Any] = "epoch_wise", every: int = 1) -> Usage:
    """A :class:`Usage` from a name, a Usage, or an ignite ``MetricUsage`` instance."""
    if isinstance(usage, Usage):
        return usage
    name = getattr(usage, "usage_name", usage)  # ignite's EpochWise() etc.
    if not isinstance(name, str):
        raise TypeError(f"usage: expected a str or Usage, got {type(usage).__name__}")
    if name in _IGNITE_NAMES:
        kind, per_epoch = _IGNITE_NAMES[name]
        return Usage(kind, every=every, reset_each_epoch=per_epoch)
    return Usage(name, every=every)


def _first_batched_tensor(args: tuple, kwargs: dict) -> Optional[torch.Tensor]:
    for value in (*args, *kwargs.values()):
        if isinstance(value, torch.Tensor) and value.dim() >= 1:
            return value
    return None


def _map_tensors(args: tuple, kwargs: dict, fn: Callable[[torch.Tensor], torch.Tensor]):
    def apply(v: Any) -> Any:
        return fn(v) if isinstance(v, torch.Tensor) else v

    return tuple(apply(v) for v in args), {k: apply(v) for k, v in kwargs.items()}


def as_update_args(output: Any) -> Tuple[tuple, dict]:
    """Turn an (output-transformed) engine output into ``update`` arguments.

    A tuple or list -> positional arguments; a Mapping with ignite's keys ``y_pred`` and ``y``
    -> ``(y_pred, y)`` (other keys ignored, as ignite does); any other Mapping -> keyword
    arguments; anything else (a tensor) -> one positional argument.
    """
    if isinstance(output, (tuple, list)):
        return tuple(output), {}
    if isinstance(output, Mapping):
        if "y_pred" in output and "y" in output:
            return (output["y_pred"], output["y"]), {}
        return (), dict(output)
    return (output,), {}


def _wrap_metrics(metrics: Any) -> Any:
    if isinstance(metrics, Mapping):
        bad = [name for name, m in metrics.items() if not is_metric_like(m)]
        if bad:
            raise TypeError(f"metrics: entries {bad} lack reset/update/compute")
        if all(isinstance(m, Metric) for m in metrics.values()):
            return MetricCollection(dict(metrics))  # one packed sync for all of them
        return _DictOfMetrics(dict(metrics))  # other libraries' metrics: one sync each
    if not is_metric_like(metrics):
        raise TypeError(
            "metrics: expected a metric, a MetricCollection or a dict of metrics (objects with "
            f"reset/update/compute), got {type(metrics).__name__}"
        )
    return metrics


def _reset_undoably(metrics: Any, is_torchtally: bool) -> Callable[[], None]:
    """Reset ``metrics`` (``is_torchtally``: whether they are torchtally's, _is_torchtally);
    return a function that undoes the reset.

    torchtally's reset() gives every state a new object (a fresh tensor, an empty block list)
    and leaves the old ones untouched, so holding them (``hold_states``) is enough to put the
    metrics back exactly, flags and cached result included: no copies. Other libraries'
    metrics cannot be put back; for them the undo does nothing.
    """
    if not is_torchtally:
        metrics.reset()
        return lambda: None
    held = metrics.hold_states()
    metrics.reset()
    return lambda: metrics.restore_states(held)


def _is_torchtally(metrics: Any) -> bool:
    return isinstance(metrics, (Metric, MetricCollection))


class _DictOfMetrics:
    """A dict of metrics that are not all torchtally's (e.g. torchmetrics'): the same calls on
    each, in insertion order."""

    def __init__(self, metrics: Dict[str, Any]) -> None:
        self.metrics = metrics

    def reset(self) -> None:
        for m in self.metrics.values():
            m.reset()

    def update(self, *args: Any, **kwargs: Any) -> _DictOfMetrics:
        for m in self.metrics.values():
            m.update(*args, **kwargs)
        return self

    def compute(self) -> Dict[str, Any]:
        return {name: m.compute() for name, m in self.metrics.items()}

    def to(self, device: Any) -> _DictOfMetrics:
        for m in self.metrics.values():
            if callable(getattr(m, "to", None)):
                m.to(device)
        return self


class MetricHook:
    """Drive a metric (or collection) from an engine's or a loop's epoch/iteration events.

    Args:
        metrics: a metric, a ``MetricCollection``, or a dict ``name -> metric`` (made into a
            ``MetricCollection``, so all of them sync together). Anything with ``reset``,
            ``update`` and ``compute`` works, e.g. torchmetrics' metrics (each then syncs on
            its own, and a batch holding only padding is skipped instead of passed empty).
        output_transform: maps what :meth:`iteration_completed` receives (the engine's output)
            to ``update``'s arguments: a tuple ``(preds, target)``, a dict (keyword arguments;
            ignite's ``{"y_pred", "y"}`` becomes ``(y_pred, y)``) or one tensor. Samples must
            stay on dim 0. Default: the output unchanged.
        usage: ``"epoch_wise"`` (default), ``"batch_wise"`` or ``"running"`` (see :class:`Usage`).
        every: for ``"running"``, sync and compute every this many iterations.
        model: the (possibly DataParallel-wrapped) model; metric state and inputs are placed on
            the device its outputs arrive on, and a DataParallel model may not hold metrics.
        device: place state and inputs here instead (overrides ``model``'s device).
        drop_padding: drop DistributedSampler padding duplicates (default True).

    After an epoch, :attr:`result` holds ``compute()``'s value (a dict for a collection),
    synced over ranks when torch.distributed is initialised: every rank must end the epoch.

    Example (a plain loop; the same code runs on one process or under torchrun)::

        hook = MetricHook({"acc": MulticlassAccuracy(num_classes=3),
                           "f1": MulticlassF1Score(num_classes=3, average="macro")})
        for epoch in range(3):
            with hook.epoch(val_loader):
                for x, y in val_loader:
                    hook.update(model(x), y)
            print(hook.result)    # {"acc": tensor(...), "f1": tensor(...)}, equal on every rank
    """

    def __init__(
        self,
        metrics: Any,
        output_transform: Optional[OutputTransform] = None,
        *,
        usage: Union[str, Usage, Any] = "epoch_wise",
        every: int = 1,
        model: Optional[nn.Module] = None,
        device: Optional[Union[str, torch.device]] = None,
        drop_padding: bool = True,
    ) -> None:
        if output_transform is not None and not callable(output_transform):
            raise TypeError(f"output_transform: expected a callable, got {type(output_transform).__name__}")
        self.metrics = _wrap_metrics(metrics)
        # torchtally metrics take zero-row updates (and must see one, so that every rank
        # updates before a running sync); other libraries' may reject them, so an all-padding
        # batch is skipped for those.
        self._is_tally = self._takes_empty = _is_torchtally(self.metrics)
        self.output_transform = output_transform
        self.usage = resolve_usage(usage, every)
        self.drop_padding = bool(drop_padding)
        self.device: Optional[torch.device] = None
        if model is not None:
            check_no_metrics_inside(model)
            self.device = metric_device(model)
        if device is not None:
            self.device = torch.device(device)
        if self.device is not None and callable(getattr(self.metrics, "to", None)):
            self.metrics.to(self.device)
        self.result: Any = None
        self.layout: Optional[ShardLayout] = None
        self.position = 0  # local sampler positions seen this epoch
        self.iteration = 0  # updates this epoch
        self.computed = False  # whether the last update also computed (batch-wise, running)
        self._warned_no_sampler = False
        self._source_given = False  # whether this epoch's loader or sampler was given
        self._counting_for: Optional[UnpaddedDistributedSampler] = None  # told what was consumed
        self._resuming = False  # loaded mid-epoch: the next epoch start keeps the loaded state
        self._epoch_open = False  # updated since the last end_epoch: a checkpoint now is mid-epoch

    # ---- events -------------------------------------------------------------------------

    def start_run(self) -> None:
        """Run started: reset here instead of per epoch for a run-long running usage."""
        if not self.usage.reset_each_epoch:
            self.metrics.reset()

    def start_epoch(self, loader: Any = None, *, sampler: Any = None) -> None:
        """Epoch started: reset (per the usage) and find the loader's DistributedSampler.

        ``loader`` is the DataLoader about to be iterated (or give its ``sampler``); without
        either, nothing is treated as padding, and under torch.distributed the first update
        warns (SamplerWarning) unless ``drop_padding=False``.
        """
        resuming, self._resuming = self._resuming, False
        if self.usage.name != "batch_wise" and self.usage.reset_each_epoch and not resuming:
            self.metrics.reset()
        self.iteration = 0
        self.start_loader(loader, sampler=sampler)
        if resuming and (self._counting_for is None or not self._counting_for.resume_stages):
            warnings.warn(
                "this epoch resumes a checkpoint's metric state, but the loader's sampler is not an "
                "UnpaddedDistributedSampler loaded from the same checkpoint: the samples counted before "
                "the checkpoint may be counted again. Save and load the sampler with the hook.",
                SamplerWarning,
                stacklevel=2,
            )

    def start_loader(self, loader: Any = None, *, sampler: Any = None, layout: Optional[ShardLayout] = None) -> None:
        """A (further) loader starts within the epoch: restart the position count for it,
        without resetting the metrics (for several evaluation loaders in one epoch).

        ``layout``: where an adapter has worked out the loader's sharding itself (Accelerate's
        batch sampler shards, torchtally.adapters.accelerate), its :class:`ShardLayout`, used
        instead of looking for a DistributedSampler."""
        self.position = 0
        self.layout = None
        self._counting_for = None
        source = sampler if sampler is not None else loader
        self._source_given = source is not None or layout is not None
        if layout is not None:
            self._check_even_batches(layout, loader)
            self.layout = layout if self.drop_padding else None
            return
        found = find_distributed_sampler(source) if source is not None else None
        if found is None:
            self._warn_if_unsharded(source)
            return
        if loader is not None:
            warn_lost_samples(loader, found)
        layout = shard_layout(found)
        if layout is None or not self.drop_padding:
            return
        if layout.pads and getattr(loader, "in_order", True) is False:
            warnings.warn(
                "DataLoader(in_order=False) may deliver the last batch early, so padding "
                "duplicates cannot be located; they are kept. Use in_order=True for evaluation.",
                SamplerWarning,
                stacklevel=3,
            )
            return
        self._check_even_batches(layout, loader)
        self.layout = layout
        if isinstance(found, UnpaddedDistributedSampler):
            self._counting_for = found

    def iteration_completed(self, output: Any) -> None:
        """Iteration completed: transform the engine's output and update from it."""
        if self.output_transform is not None:
            output = self.output_transform(output)
        args, kwargs = as_update_args(output)
        self.update(*args, **kwargs)

    def update(self, *args: Any, **kwargs: Any) -> MetricHook:
        """Update the metrics from one batch of outputs, without its padding duplicates.

        Call it once per batch, in the loader's order. For ``batch_wise`` and ``running``
        usages it also syncs and computes (every rank must make the same number of calls).

        A batch the metrics reject (``update`` raises) leaves the hook as it was: the sampler
        positions it covered are not counted (so the batch can be fixed and sent again), and
        ``batch_wise``'s reset before it is undone (for torchtally metrics; other libraries'
        metrics stay reset).
        """
        if not self._source_given:
            self._warn_if_unsharded(None)
        args, kwargs, kept, rows = self._drop_duplicates(args, kwargs)
        only_padding = kept == 0
        if self.device is not None:
            device = self.device
            args, kwargs = _map_tensors(args, kwargs, lambda t: t.to(device, non_blocking=True))
        undo_reset = _reset_undoably(self.metrics, self._is_tally) if self.usage.name == "batch_wise" else None
        if not (only_padding and not self._takes_empty):
            try:
                self.metrics.update(*args, **kwargs)
            except BaseException:
                if undo_reset is not None:
                    undo_reset()
                raise
        self.position += rows
        if self._counting_for is not None:  # exact where the loader fetches ahead of the updates
            self._counting_for.mark_consumed(self.position)
        self.iteration += 1
        self._epoch_open = True
        self.computed = self.usage.name == "batch_wise" or (
            self.usage.name == "running" and self.iteration % self.usage.every == 0
        )
        if self.computed:
            self.result = self._compute()
        return self

    def _compute(self) -> Any:
        """The metrics' compute(). An engine follows ignite's rule: no update on any rank since
        the epoch started raises NotComputableError (a metric alone would warn, as torchmetrics)."""
        if self._is_tally:
            with self.metrics.raising_if_never_updated():
                return self.metrics.compute()
        return self.metrics.compute()

    def end_epoch(self) -> Any:
        """Epoch completed: sync and compute (every rank must call this) and return the result."""
        layout = self.layout
        if layout is not None and 0 < self.position != layout.num_samples:
            warnings.warn(
                f"the epoch covered {self.position} of this rank's {layout.num_samples} sampler "
                "positions; padding is only dropped from a full pass over the loader",
                SamplerWarning,
                stacklevel=2,
            )
        if self.usage.name != "batch_wise":
            self.result = self._compute()
        self._epoch_open = False
        return self.result

    @contextlib.contextmanager
    def epoch(self, loader: Any = None, *, sampler: Any = None) -> Iterator[MetricHook]:
        """``with hook.epoch(loader): ...`` = start_epoch, the body's updates, end_epoch.

        If the body raises, nothing is computed (no collective is started) and the error
        propagates.
        """
        self.start_epoch(loader, sampler=sampler)
        yield self
        self.end_epoch()

    # ---- checkpoints ----------------------------------------------------------------------

    def state_dict(self) -> Dict[str, Any]:
        """:meth:`resumable_state_dict`, for any checkpointer: ``dcp.save``, and the libraries
        that ask every process for ``state_dict()`` but write the main process's only
        (Accelerate's ``save_state``, Fabric's ``save``; the record holds every rank's state,
        so that one file is the whole). When ``dcp.load`` calls it, the key to read."""
        return checkpointer_state_dict(self.resumable_state_dict)

    def resumable_state_dict(self) -> Dict[str, Any]:
        """The metrics' state on every rank, to resume mid-epoch at any world size, as
        ``{"torchtally_resume": bytes}`` (the metrics' ``resumable_state_dict``): save it at a
        batch boundary with the loader's UnpaddedDistributedSampler, e.g. ``dcp.save({"hook":
        hook, "sampler": sampler}, checkpoint_id=...)``; the hook tells that sampler after every
        update how many of its positions are done. A collective under torch.distributed: every
        rank must call it (``dcp.save`` does). Only torchtally metrics can be saved so."""
        if not self._is_tally:
            raise TypeError(
                f"MetricHook.state_dict: metrics of type {type(self.metrics).__name__} cannot be resumed at "
                "another world size; use torchtally metrics"
            )
        inner = self.metrics.resumable_state_dict()
        # the same on every rank (every rank writes the same bytes): mid-epoch if any rank is
        mid_epoch = any(gather_from_ranks(self._epoch_open))
        return pack_record("MetricHook", {"metrics": inner, "usage": self.usage.name, "mid_epoch": mid_epoch})

    def load_state_dict(self, state_dict: Mapping[str, Any]) -> None:
        """Load :meth:`state_dict`'s form saved at any world size (see
        ``Metric.load_resumable_state_dict``): rank 0 holds the saved ranks' total, the others
        start empty, so a sync (``self.metrics.compute()``) gives the saved epoch's result on
        every rank. Saved mid-epoch (updates since the last :meth:`end_epoch`), the next
        :meth:`start_epoch` keeps the loaded state instead of resetting, so the resumed epoch
        ends with the whole epoch's result; saved after :meth:`end_epoch`, the next epoch
        starts from zero as usual. A checkpoint of other metrics or another usage raises
        ValueError; nothing changes then."""
        record = unpack_record(state_dict, "MetricHook")
        if not self._is_tally:
            raise TypeError(f"MetricHook.load_state_dict: metrics of type {type(self.metrics).__name__} cannot load it")
        if record["usage"] != self.usage.name:
            raise ValueError(
                f"MetricHook.load_state_dict: the checkpoint was saved with usage {record['usage']!r}, "
                f"this hook has {self.usage.name!r}. Nothing was loaded"
            )
        self.metrics.load_resumable_state_dict(record["metrics"])
        self._resuming = bool(record.get("mid_epoch", True))
        self._epoch_open = False
        self.result = None

    load_resumable_state_dict = load_state_dict  # the name Metric and MetricCollection give it

    def reset(self) -> None:
        """Reset the metrics and the position counter (and forget a loaded checkpoint's resume)."""
        self.metrics.reset()
        self._resuming = False
        self._epoch_open = False
        self.position = 0
        self.iteration = 0
        self.result = None

    # ---- padding ------------------------------------------------------------------------

    def _drop_duplicates(self, args: tuple, kwargs: dict) -> Tuple[tuple, dict, Optional[int], int]:
        """The arguments without padding rows, how many rows were kept (None: unknown), and how
        many sampler positions the batch covers (the caller counts them once the update took)."""
        layout = self.layout
        first = _first_batched_tensor(args, kwargs)
        if layout is None:
            return args, kwargs, None, 0
        if first is None:
            if layout.pads:  # same answer on every rank, so every rank raises
                raise ValueError(
                    "update arguments: the DistributedSampler pads its shards with duplicates, "
                    "which are dropped per sample, but no argument has a batch dimension (got "
                    "only scalars). Pass per-sample values (e.g. a loss with reduction='none')."
                )
            return args, kwargs, None, 0
        count = first.shape[0]
        start = self.position
        if start + count > layout.num_samples:
            raise ValueError(
                f"update arguments: {start + count} samples this epoch, but the sampler gives "
                f"rank {layout.rank} only {layout.num_samples}. Outputs must keep one row per "
                "sample on dim 0 with one update per batch; else pass drop_padding=False."
            )
        keep = layout.valid_in(start, count)
        if keep == count:
            return args, kwargs, keep, count
        for value in (*args, *kwargs.values()):
            if isinstance(value, torch.Tensor) and value.dim() >= 1 and value.shape[0] != count:
                raise ValueError(
                    "update arguments: expected every batched tensor to have "
                    f"{count} rows on dim 0 (as the first one), got shape {tuple(value.shape)}"
                )
        args, kwargs = _map_tensors(args, kwargs, lambda t: t[:keep] if t.dim() >= 1 else t)
        return args, kwargs, keep, count

    def _check_even_batches(self, layout: ShardLayout, loader: Any) -> None:
        if not self.usage.syncs_per_iteration or layout.even:
            return
        batch_sampler = getattr(loader, "batch_sampler", None)
        batch_size = getattr(batch_sampler, "batch_size", None)
        drop_last = bool(getattr(batch_sampler, "drop_last", False))
        if not isinstance(batch_size, int) or batch_size < 1:
            return
        counts = layout.batches_per_rank(batch_size, drop_last)
        if len(set(counts)) > 1:  # every rank computes the same counts, so every rank raises
            raise ValueError(
                f"usage: {self.usage.name!r} syncs during the epoch, so every rank must run the "
                f"same number of batches, but this sampler's uneven shards give {counts}. "
                "Use DistributedSampler (padded) or usage='epoch_wise'."
            )

    def _warn_if_unsharded(self, source: Any) -> None:
        """Under torch.distributed, warn once per hook when no DistributedSampler was found in
        ``source`` (the loader or sampler given, None if neither was): never a silent result
        that may count samples twice."""
        if self._warned_no_sampler:
            return
        td = torch.distributed
        if not (td.is_available() and td.is_initialized() and td.get_world_size() > 1):
            return
        world = td.get_world_size()
        batch_sampler = getattr(source, "batch_sampler", None)
        # a DataLoader given a batch_sampler still holds a default SequentialSampler: ignore it
        sampler = (
            source
            if batch_sampler is None and not hasattr(source, "sampler")
            else (getattr(batch_sampler, "sampler", None) if batch_sampler is not None else source.sampler)
        )
        if isinstance(sampler, (SequentialSampler, RandomSampler)):
            message = (
                f"the loader has no DistributedSampler while world size is {world}: if every "
                "rank iterates the whole dataset, synced metrics count each sample once per rank"
            )
        elif not self.drop_padding:
            return  # the caller declared that the loader gives each sample to one rank
        else:
            what = (
                "no loader or sampler was given"
                if source is None
                else (f"torchtally cannot tell how a {type(source).__name__} shards its data")
            )
            message = (
                f"{what} (world size {world}), so DistributedSampler padding duplicates cannot "
                "be located: synced metrics may count them. Pass the loader's DistributedSampler "
                "(start_epoch(loader, sampler=...)), use a DataLoader with a DistributedSampler, "
                "or for Avalanche's loaders torchtally.adapters.avalanche; pass "
                "drop_padding=False if every sample goes to exactly one rank."
            )
        self._warned_no_sampler = True
        warnings.warn(message, SamplerWarning, stacklevel=3)
