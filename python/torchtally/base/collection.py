"""MetricCollection: update and compute many metrics, sharing state and syncing it in one pass."""

import copy
import warnings
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import torch
from torch import nn

from ..errors import stacklevel_outside_torchtally
from ..kernels.ops import compiling
from ..sync import dist
from ..sync.fingerprint import raise_if_different
from ..sync.plan import SyncPlan
from .attachable import Attachable
from .guard import Guard, locked, new_lock
from .input_guard import check_readable, guards_inputs
from .members import Members, check_affix, check_compute_groups, share_states
from .metric import Metric
from .options import checked_recipient_rank
from .placement import first_tensor
from .plotting import plot_value
from .resume import DcpStateDict, gather_from_ranks, is_resumable, pack_record, raise_if_record_differs, unpack_record
from .state_dict import raise_key_problems
from .states import HeldStates
from .synced import SyncedCollection

MetricsArg = Union[
    Metric,
    "MetricCollection",
    Sequence[Union[Metric, "MetricCollection"]],
    Mapping[str, Union[Metric, "MetricCollection"]],
]


class MetricCollection(DcpStateDict, SyncedCollection, Members, Attachable, Guard, nn.Module):
    """A named group of metrics updated with the same inputs and synced together: an
    ``nn.Module`` with torchmetrics' MetricCollection interface.

    * ``MetricCollection(metrics, *more, prefix=None, postfix=None, compute_groups=True)``:
      ``metrics`` is a metric, a list of metrics (each named by its class), a dict
      ``name -> metric`` (kept in sorted name order, as torchmetrics) or another collection;
      collections nested in a list or dict are flattened into this one (their keys keep their
      prefix and postfix; in a dict they also get ``"<name>_"`` in front).
    * ``update(*args, **kwargs)`` calls ``update`` of every metric with the same positional
      arguments and the keyword arguments its update takes. Metrics that share one state (see
      ``compute_groups``) are updated once, through the first of them (its *owner*).
    * ``metrics(*args, **kwargs)`` (``forward``) returns ``{key: value on this batch}`` and
      accumulates the batch, with one update per shared state.
    * ``compute()`` returns ``{key: result}``; keys carry ``prefix`` and ``postfix``. When it
      has to sync (torch.distributed initialised, world size > 1, ``sync_on_compute``), all
      metrics' states go through one packed sync: a header, one all_reduce per (dtype, op)
      group and at most one gather, however many metrics there are; a shared state is sent
      once. It is then a collective: every rank calls it.

    ``compute_groups``: True (default) shares state between metrics whose ``state_key`` is
    equal (accuracy, precision, recall, F1... of one task and state options): decided from
    the metrics' options when they are added, never from their values, so it is exact from the
    first batch (torchmetrics compares states after the first update). False: no sharing. A
    list of lists of keys: those groups share, and nothing else does; a group whose metrics
    declare different states, or different ``state_key``s, raises ValueError.

    The collection's sync options (same meaning as Metric's) apply to all its metrics. A batch
    that one metric rejects (its ``update`` raises) leaves the whole collection as it was.

    Every metric's options enter the sync's fingerprint, also those of metrics that share
    another's state (a compute-only option such as ``average`` changes what a rank prints):
    ranks configured differently raise SyncError naming the metric, the option and both values,
    before any data moves; ``merge_state`` and ``load_state_dict`` raise ValueError.

    Threads and shared state: the collection and all its metrics hold one lock, so its calls
    and direct calls of its metrics (``coll["f1"].update(...)``) run one at a time; a metric
    updated directly updates the state its group shares, and the cached results of the whole
    group are dropped. ``compute()`` returns copies of the cached results.

    Example:

        >>> import torch
        >>> from torchtally import MetricCollection
        >>> from torchtally.classification import MulticlassAccuracy, MulticlassPrecision
        >>> metrics = MetricCollection([MulticlassAccuracy(3, average="micro"),
        ...                             MulticlassPrecision(3, average="macro")], prefix="val_")
        >>> metrics(torch.tensor([2, 1, 2, 0]), torch.tensor([0, 1, 2, 0]))
        {'val_MulticlassAccuracy': tensor(0.7500), 'val_MulticlassPrecision': tensor(0.8333)}
        >>> metrics.compute_groups
        {0: ['MulticlassAccuracy', 'MulticlassPrecision']}
    """

    _reset_on_pickle = {**Guard._reset_on_pickle, "_plan_key": None}
    __jit_unused_properties__ = ["metric_state", "compute_groups", "_metrics"]

    def __init__(
        self,
        metrics: MetricsArg,
        *additional_metrics: Metric,
        prefix: Optional[str] = None,
        postfix: Optional[str] = None,
        compute_groups: Union[bool, List[List[str]]] = True,
        sync_on_compute: bool = True,
        process_group: Optional[Any] = None,
        sync_timeout: Optional[dist.TimeoutLike] = None,
        recipient_rank: Optional[int] = None,
    ) -> None:
        nn.Module.__init__(self)
        self.prefix = check_affix(prefix, "prefix")
        self.postfix = check_affix(postfix, "postfix")
        self._compute_groups_arg = check_compute_groups(compute_groups)
        self.sync_on_compute = bool(sync_on_compute)
        self.process_group = process_group
        self.sync_timeout = dist.timeout_seconds(sync_timeout)
        self.recipient_rank = checked_recipient_rank(recipient_rank)
        self._if_never_updated = "warn"
        self._plan: Optional[SyncPlan] = None
        self._plan_key: Optional[Tuple] = None
        self._plan_parts: Optional[Tuple] = None  # see SyncedCollection._sync_parts
        self._lock = new_lock()  # shared with every metric (torchtally.base.guard)
        self.add_metrics(metrics, *additional_metrics)

    @property
    def _metrics(self) -> Dict[str, Metric]:
        return self._modules  # type: ignore[return-value]

    # -- building ------------------------------------------------------------------------

    @locked
    def add_metrics(self, metrics: MetricsArg, *additional_metrics: Metric) -> None:
        """Add metrics (same forms as the constructor) and work out the shared states again."""
        for name, metric in _entries(metrics, additional_metrics):
            if name in self._modules:
                raise ValueError(f"Metric with name '{name}' already exists in the collection.")
            for other_name, other in self._modules.items():
                if other is metric:
                    raise ValueError(f"metrics '{other_name}' and '{name}' are the same object")
            self.add_module(name, metric)
        self._share_states()

    def _share_states(self) -> None:
        """Decide which metric owns each state (see compute_groups) and alias the sharers."""
        self._owner_of: Dict[str, str] = share_states(self._metrics, self._compute_groups_arg)
        self._owners: List[str] = [n for n in self._metrics if self._owner_of[n] == n]
        # Update order: the owner with the most fixed-state bytes last, as the last one needs no
        # snapshot (see update).
        self._update_order: List[Metric] = sorted(
            (self._metrics[n] for n in self._owners), key=Metric.fixed_state_bytes
        )
        self._plan = None
        self._plan_key = None
        self._plan_parts = None
        self._link_members(shared=True)
        self._alias_shared()

    def _link_members(self, shared: bool) -> None:
        """Give every metric the collection's lock and, with ``shared``, the group of metrics
        sharing its state (so that one updated directly keeps its group current)."""
        groups: Dict[str, List[Metric]] = {}
        for name, owner in self._owner_of.items():
            groups.setdefault(owner, []).append(self._metrics[name])
        for name, owner in self._owner_of.items():
            group = groups[owner] if shared and len(groups[owner]) > 1 else None
            self._metrics[name].join_state_group(group, self._lock)

    @property
    def metric_state(self) -> Dict[str, Dict[str, torch.Tensor]]:
        """{key: that metric's metric_state}."""
        return {name: metric.metric_state for name, metric in self._metrics.items()}

    @property
    def compute_groups(self) -> Dict[int, List[str]]:
        """{group index: [keys]}: the metrics of a group share one state, owned by the first."""
        groups: Dict[str, List[str]] = {}
        for name, owner in self._owner_of.items():
            groups.setdefault(owner, []).append(name)
        return dict(enumerate(groups.values()))

    def _alias_shared(self, keep_caches: bool = False) -> None:
        """Point every sharing metric at its owner's current state (cheap: no copies); with
        ``keep_caches``, only the state objects (flags and cached results stay)."""
        for name, owner_name in self._owner_of.items():
            if owner_name == name:
                continue
            self._metrics[name].share_states_of(self._metrics[owner_name], keep_cache=keep_caches)

    # -- update / forward / compute ------------------------------------------------------

    @locked
    def update(self, *args: Any, **kwargs: Any) -> "MetricCollection":
        """Update every state owner with the batch. If one raises, the owners updated before it
        are put back as they were and the error propagates.

        A metric leaves its own state unchanged when its update raises (the bad-input rule), so
        only the owners before the last one updated need a snapshot: each of their fixed and
        merge states is cloned, and each cat state's block list is cut back to its length (so
        an update must add cat rows with ``append_state`` or assign the state, not rewrite the
        list of blocks). Owners are updated in increasing order of state size, so the largest
        state is never copied; with one owner (metrics sharing one state) nothing is.

        Device: as for a Metric, state follows the first tensor argument while it holds no
        data, but the collection decides once, before any member updates, and moves all its
        metrics together, so shared states stay one object. An owner holding data on another
        device makes the batch fail (ValueError) before anything changes.
        """
        owners = self._update_order
        if compiling():
            return self._update_traced(owners, args, kwargs)
        x = args[0] if args else None
        if not isinstance(x, torch.Tensor):
            x = first_tensor(args, kwargs)
        moved = None
        if x is not None:
            device = x.device
            for m in owners:
                if m.device != device:
                    moved = self._follow_device(x, args, kwargs)
                    break
        everyone = list(self._metrics.values())  # an owner's update tells its group: keep theirs too
        flags = [m.hold_flags() for m in everyone]
        saved = [m.checkpoint_states() for m in owners[:-1]]
        try:
            for metric in owners:
                metric.update(*args, **(metric.accepted_update_kwargs(kwargs) if kwargs else kwargs))
        except BaseException:
            for metric, states in zip(owners, saved):
                metric.rollback_states(states)
            for metric, held_flags in zip(everyone, flags):
                metric.restore_flags(held_flags)
            if moved is not None:  # back to the device (and objects) from before this batch
                for metric, placement in moved:
                    metric.restore_placement(placement)
            self._alias_shared(keep_caches=True)  # the sharers back on their owners' (restored) objects
            raise  # the restored owners hold their original objects: sharing metrics still alias them
        return self  # each owner's update has pointed its group at its state (torchtally.base.guard)

    def _update_traced(self, owners: List[Metric], args: tuple, kwargs: dict) -> "MetricCollection":
        """update() as dynamo traces it (inside ``torch.compile``): each owner's traced update
        (Metric._update_traced), with no checkpoint to roll back to (a graph cannot catch): a
        batch that one owner's kernel rejects raises from the compiled step after the owners
        before it counted it (the reference site's "Inside torch.compile" page says so)."""
        for metric in owners:
            metric.update(*args, **(metric.accepted_update_kwargs(kwargs) if kwargs else kwargs))
        return self

    def _follow_device(self, x: torch.Tensor, args: tuple, kwargs: dict) -> List[Tuple[Metric, Tuple[Any, ...]]]:
        """Move every metric to ``x``'s device (owners' states, everyone's defaults), or raise
        if an owner that is elsewhere holds data. Returns what undoes the move."""
        device = x.device
        for name in self._owners:
            metric = self._metrics[name]
            if x.is_meta and guards_inputs(type(metric)):  # a meta batch is no device to follow
                check_readable(metric, type(metric).update, args, kwargs)
            if metric.device != device and metric.has_data:
                raise metric.device_mismatch(
                    type(metric).update, args, kwargs, x, where=f"the state of this collection's metric '{name}' is"
                )
        moved = [(m, m.placement()) for m in self._metrics.values()]
        for name, metric in self._metrics.items():
            metric.place_states(device, states=self._owner_of[name] == name)
            metric.drop_cached_result()
        self._alias_shared()
        return moved

    @torch.jit.unused
    @locked
    def forward(self, *args: Any, **kwargs: Any) -> Dict[str, Any]:
        """{key: the metric over this batch alone}, with the batch accumulated too: one update
        per shared state, then each owner's accumulated states combined with the batch's."""
        owners = self._update_order
        x = first_tensor(args, kwargs)
        if x is not None:
            device = x.device
            for m in owners:
                if m.device != device:
                    self._follow_device(x, args, kwargs)  # raises if an owner holds data elsewhere
                    break
        held = [m.hold_and_clear_states() for m in owners]
        self._alias_shared()
        try:
            # The owners' updates directly: what update() adds (following the device, undoing
            # the owners before a failing one) is done here already (the held states).
            for m in owners:
                m.update(*args, **(m.accepted_update_kwargs(kwargs) if kwargs else kwargs))
            for m, h in zip(owners, held):
                m.raise_rejected_batch(h)  # on CUDA: no value from a batch the device rejected
            values = self._batch_values()
        except BaseException:
            for m, h in zip(owners, held):
                m.forget_rejected_cuda_updates()
                m.restore_states(h)
            self._alias_shared()
            raise
        try:  # every owner's combination first: a merge may refuse a pair, and then none changes
            combined = [None if m.full_state_update is not False else m.combined_with(h) for m, h in zip(owners, held)]
        except BaseException:
            for m, h in zip(owners, held):
                m.restore_states(h)
            self._alias_shared()
            raise
        for m, h, states in zip(owners, held, combined):
            if states is not None:
                m.assign_combined(states, h)
        again = [(m, h) for m, h, states in zip(owners, held, combined) if states is None]
        if again:  # metrics whose update reads their state: their accumulated states, updated again
            self._update_again(again, args, kwargs)
        self._alias_shared()
        for name, metric in self._metrics.items():  # each metric's own forward value (Lightning's on_step log)
            metric.keep_batch_value(values[name])
        return self._renamed(values)

    def _update_again(self, owners_held: List[Tuple[Metric, Any]], args: tuple, kwargs: dict) -> None:
        for m, h in owners_held:
            m.restore_states(h)
        try:
            for m, _ in owners_held:
                m.update(*args, **(m.accepted_update_kwargs(kwargs) if kwargs else kwargs))
        except BaseException:  # the batch was accepted once, so unlikely: leave them as before it
            for m, h in owners_held:
                m.restore_states(h)
            self._alias_shared()
            raise

    def _batch_values(self) -> Dict[str, Any]:
        """Every metric's value on the states of the batch just updated."""
        metrics = self._metrics
        synced = None
        if any(m.dist_sync_on_step for m in metrics.values()) and self._should_sync():
            synced = self._compute_synced(dirty=True)  # one packed sync for the ones that ask
        local = [n for n, m in metrics.items() if synced is None or not m.dist_sync_on_step]
        values = self.values_on(local, lambda name: None)
        return {name: values[name] if name in values else synced[name] for name in metrics}  # type: ignore[index]

    # -- lifecycle ----------------------------------------------------------------------

    def hold_states(self) -> List[HeldStates]:
        """Every metric's ``hold_states()`` (references, no copies), for ``restore_states``."""
        return [metric.hold_states() for metric in self._metrics.values()]

    def restore_states(self, held: List[HeldStates]) -> None:
        """Put back what ``hold_states`` held; sharing metrics share their owners' objects again."""
        for metric, states in zip(self._metrics.values(), held):
            metric.restore_states(states)
        self._alias_shared(keep_caches=True)

    @locked
    def reset(self) -> "MetricCollection":
        for name in self._owners:
            self._metrics[name].reset()
        for metric in self._metrics.values():
            metric.drop_cached_result()
            metric.keep_batch_value(None)
        self._alias_shared()
        return self

    @locked
    def merge_state(self, others: Union["MetricCollection", Sequence["MetricCollection"]]) -> "MetricCollection":
        """Fold other collections (same names, same metrics, same options) into this one; others
        unchanged. A metric whose options differ raises ValueError before anything is merged."""
        others = [others] if isinstance(others, MetricCollection) else list(others)
        for other in others:
            if not isinstance(other, MetricCollection) or list(other._metrics) != list(self._metrics):
                raise ValueError(
                    f"merge_state: expected MetricCollections with metrics {list(self._metrics)}, got "
                    f"{list(other._metrics) if isinstance(other, MetricCollection) else type(other).__name__}"
                )
            for name, metric in self._metrics.items():  # every metric: sharers have options of their own
                try:
                    metric.check_options_of(other._metrics[name], "merge_state")
                except ValueError as exc:
                    raise ValueError(f"MetricCollection metric '{name}': {exc}") from None
        for name in self._owners:
            self._metrics[name].merge_state([o._metrics[name] for o in others])
        self._alias_shared()
        return self

    def persistent(self, mode: bool = True) -> None:
        """Whether state_dict() includes the metrics' states."""
        for metric in self._metrics.values():
            metric.persistent(mode)

    def resumable_state_dict(self) -> Dict[str, Any]:
        """Every metric's state on every rank, as ``{"torchtally_resume": bytes}`` (one gather
        for the whole collection): what ``dcp.save`` stores, loadable by :meth:`load_state_dict`
        at any world size. A collective: every rank must call it, at a batch boundary."""
        local = {name: metric.resumable_payload() for name, metric in self._metrics.items()}
        return pack_record("MetricCollection", {"names": list(self._metrics), "ranks": gather_from_ranks(local)})

    @locked
    def load_resumable_state_dict(self, state_dict: Mapping[str, Any]) -> None:
        """Load :meth:`resumable_state_dict`'s form saved at any world size (see
        Metric.load_resumable_state_dict: rank 0 takes the combined total, the others start
        empty). Every metric is checked before any is assigned."""
        record = unpack_record(state_dict, "MetricCollection")
        raise_if_record_differs("MetricCollection", {"metrics": list(self._metrics)}, {"metrics": record["names"]})
        resumed = {}
        for name in self._owners:
            try:
                resumed[name] = self._metrics[name].checked_resume([r[name] for r in record["ranks"]], name)
            except ValueError as exc:
                raise ValueError(f"MetricCollection metric '{name}': {exc}") from None
        for name, metric in self._metrics.items():  # sharers have options of their own: check them too
            if name not in resumed:
                for payload in record["ranks"]:
                    raise_if_different_options(name, metric, payload[name])
        for name, checked in resumed.items():
            self._metrics[name].assign_resumed(checked)
        for metric in self._metrics.values():
            metric.drop_cached_result()
        self._alias_shared()

    @locked
    def load_state_dict(self, state_dict: Mapping[str, Any], strict: bool = True, assign: bool = False) -> Any:
        """nn.Module's load_state_dict; every metric's entries (and the options they were saved
        with) are checked before any is assigned, and shared states stay shared (the owner's
        entry wins). A resumable state dict goes to :meth:`load_resumable_state_dict` (None
        is returned)."""
        if is_resumable(state_dict):
            self.load_resumable_state_dict(state_dict)
            return None
        missing: List[str] = []
        unexpected = [k for k in state_dict if k.partition(".")[0] not in self._metrics]
        for name, metric in self._metrics.items():
            prefix = f"{name}."
            metric.check_state_dict(
                {k[len(prefix) :]: v for k, v in state_dict.items() if k.startswith(prefix)}, strict=False
            )
            try:
                metric.check_saved_options(state_dict, prefix)
            except ValueError as exc:
                raise ValueError(f"MetricCollection metric '{name}': {exc}") from None
            problems = metric.state_dict_key_problems(state_dict, prefix)
            missing += problems[0]
            unexpected += problems[1]
        if strict:
            raise_key_problems("MetricCollection", missing, unexpected)
        self._link_members(shared=False)  # each metric loads its own entries; the owners' are shared below
        try:
            result = nn.Module.load_state_dict(self, state_dict, strict=strict, assign=assign)
        finally:
            self._link_members(shared=True)
            self._alias_shared()
        return result

    def _apply(self, fn: Any, *args: Any, **kwargs: Any) -> "MetricCollection":
        """Moves (``.to()``, ``.cuda()``, a parent's ``.to()``) every metric; shared states stay
        shared. A CUDA batch rejected on the device and not yet raised is raised first, before
        any metric moves, so that the collection is not left split across devices."""
        for name in self._owners:
            metric = self._metrics[name]
            if fn(torch.zeros((), device=metric.device)).device != metric.device:
                metric.raise_rejected_cuda_updates()
        super()._apply(fn, *args, **kwargs)
        for name, owner in self._owner_of.items():
            if owner != name:  # its states are the owner's (aliased below); move its defaults
                self._metrics[name].place_states(self._metrics[owner].device, states=False)
        self._alias_shared()
        return self

    def set_dtype(self, dst_type: Union[str, torch.dtype]) -> "MetricCollection":
        """``set_dtype`` of every metric: the dtype of their floating-point results."""
        for metric in self._metrics.values():
            metric.set_dtype(dst_type)
        return self

    def plot(self, val: Optional[Dict[str, Any]] = None, ax: Any = None, together: bool = False) -> Any:
        """Each metric's plot (a list of (figure, axes)), or with ``together`` every scalar
        result as one series in one figure; ``val`` defaults to ``compute()``."""
        val = self.compute() if val is None else val
        if together:
            return plot_value(val, ax, "MetricCollection")
        return [self[key].plot(value, ax) for key, value in val.items()]

    def clone(self, prefix: Optional[str] = None, postfix: Optional[str] = None) -> "MetricCollection":
        """A deep copy, optionally with another prefix / postfix."""
        new = copy.deepcopy(self)
        if prefix:
            new.prefix = check_affix(prefix, "prefix")
        if postfix:
            new.postfix = check_affix(postfix, "postfix")
        return new

    def __deepcopy__(self, memo: Dict[int, Any]) -> "MetricCollection":
        new = super().__deepcopy__(memo)
        new._link_members(shared=True)  # the copied metrics, sharing the copied lock and states
        return new

    def __setstate__(self, state: Dict[str, Any]) -> None:
        super().__setstate__(state)
        self._link_members(shared=True)  # a fresh lock, shared again
        self._alias_shared()


def raise_if_different_options(name: str, metric: Metric, payload: Dict[str, Any]) -> None:
    """ValueError naming collection member ``name`` when its saved options differ from its own."""
    try:
        raise_if_different(
            type(metric).__name__, metric.described_options, payload["options"], "load_state_dict", "the checkpoint"
        )
    except ValueError as exc:
        raise ValueError(f"MetricCollection metric '{name}': {exc}") from None


def _entries(metrics: Any, additional: Tuple[Any, ...]) -> List[Tuple[str, Metric]]:
    """(key, metric) pairs from the constructor's / add_metrics' arguments, nested collections
    flattened, as torchmetrics names them."""
    if isinstance(metrics, Metric):
        metrics = [metrics]
    if isinstance(metrics, Sequence) and not isinstance(metrics, (str, bytes)):
        metrics = list(metrics)
        ignored: List[Any] = []
        for extra in additional:
            (metrics if isinstance(extra, (Metric, MetricCollection)) else ignored).append(extra)
        if ignored:
            warnings.warn(
                f"You have passed extra arguments {ignored} which are not `Metric` so they will be ignored.",
                stacklevel=stacklevel_outside_torchtally(),
            )
    elif additional:
        raise ValueError(
            f"You have passed extra arguments {additional} which are not compatible with the first passed "
            f"dictionary {metrics}"
        )
    entries: List[Tuple[str, Metric]] = []
    if isinstance(metrics, MetricCollection):
        return list(metrics.items(keep_base=False))
    if isinstance(metrics, Mapping):
        for name in sorted(metrics):
            value = metrics[name]
            if isinstance(value, MetricCollection):
                entries.extend((f"{name}_{key}", m) for key, m in value.items(keep_base=False))
            elif isinstance(value, Metric):
                if not isinstance(name, str) or not name:
                    raise ValueError(f"metric names must be non-empty strings, got {name!r}")
                entries.append((name, value))
            else:
                raise ValueError(
                    f"Value {value!r} belonging to key {name!r} is not an instance of torchtally.Metric or "
                    "torchtally.MetricCollection"
                )
        return entries
    if isinstance(metrics, list):
        seen = set()
        for value in metrics:
            if isinstance(value, MetricCollection):
                entries.extend(value.items(keep_base=False))
            elif isinstance(value, Metric):
                name = type(value).__name__
                if name in seen:
                    raise ValueError(f"Encountered two metrics both named {name}")
                seen.add(name)
                entries.append((name, value))
            else:
                raise ValueError(
                    f"Input {value!r} to `MetricCollection` is not an instance of torchtally.Metric "
                    "or torchtally.MetricCollection"
                )
        return entries
    raise ValueError(
        "Unknown input to MetricCollection. Expected a Metric, a MetricCollection or a dict/sequence of them, "
        f"got {type(metrics).__name__}"
    )
