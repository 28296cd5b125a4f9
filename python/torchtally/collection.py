"""MetricCollection: update and compute many metrics, sharing state and syncing it in one pass."""
import contextlib
import copy
import warnings
from typing import Any, Dict, Iterable, Iterator, List, Mapping, Optional, Sequence, Tuple, Union

import torch
from torch import nn

from . import dist
from .group_copy import GroupBoundCopy
from .collection_groups import check_affix, check_compute_groups, share_states
from .errors import NotComputableError
from .metric import Metric
from .metric_guard import caller_copy, locked, new_lock
from .metric_state import first_tensor, raise_key_problems
from .plotting import plot_value
from .sync import UNCHANGED, SyncPlan, sync_states

MetricsArg = Union[Metric, "MetricCollection", Sequence[Union[Metric, "MetricCollection"]],
                   Mapping[str, Union[Metric, "MetricCollection"]]]


class MetricCollection(GroupBoundCopy, nn.Module):
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

    _reset_on_pickle = {**GroupBoundCopy._reset_on_pickle, "_plan_key": None}
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
        if recipient_rank is not None and (not isinstance(recipient_rank, int) or recipient_rank < 0):
            raise ValueError(f"recipient_rank must be None or a rank >= 0, got {recipient_rank!r}")
        self.prefix = check_affix(prefix, "prefix")
        self.postfix = check_affix(postfix, "postfix")
        self._compute_groups_arg = check_compute_groups(compute_groups)
        self.sync_on_compute = bool(sync_on_compute)
        self.process_group = process_group
        self.sync_timeout = dist.timeout_seconds(sync_timeout)
        self.recipient_rank = recipient_rank
        self._if_never_updated = "warn"
        self._plan: Optional[SyncPlan] = None
        self._plan_key: Optional[Tuple] = None
        self._lock = new_lock()  # shared with every metric (torchtally.metric_guard)
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
        self._update_order: List[Metric] = sorted((self._metrics[n] for n in self._owners), key=_fixed_state_bytes)
        self._plan = None
        self._plan_key = None
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
            self._metrics[name]._join_state_group(group, self._lock)

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
            member, owner = self._metrics[name], self._metrics[owner_name]
            for state in owner._specs:
                if state in owner._cat_chunks:
                    member._cat_chunks[state] = owner._cat_chunks[state]
                else:
                    member.__dict__[state] = owner.__dict__[state]
            if member.device != owner.device:
                member.__dict__["device"] = owner.device
            if not keep_caches:
                member.__dict__["_updated"] = owner._updated
                member.__dict__["_update_count"] = owner._update_count
                member.__dict__["_cache"] = None

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
        flags = [(m._updated, m._update_count, m._cache) for m in everyone]
        saved = [_snapshot_states(m) for m in owners[:-1]]
        try:
            for metric in owners:
                metric.update(*args, **(metric.accepted_update_kwargs(kwargs) if kwargs else kwargs))
        except BaseException:
            for metric, states in zip(owners, saved):
                _restore_states(metric, states)
            for metric, (updated, count, cache) in zip(everyone, flags):
                d = metric.__dict__
                d["_updated"], d["_update_count"], d["_cache"] = updated, count, cache
            if moved is not None:  # back to the device (and objects) from before this batch
                for metric, placement in moved:
                    metric._restore_placement(placement)
            self._alias_shared(keep_caches=True)  # the sharers back on their owners' (restored) objects
            raise  # the restored owners hold their original objects: sharing metrics still alias them
        return self  # each owner's update has pointed its group at its state (Metric._share_my_state)

    def _follow_device(self, x: torch.Tensor, args: tuple, kwargs: dict) -> List[Tuple[Metric, Tuple[Any, ...]]]:
        """Move every metric to ``x``'s device (owners' states, everyone's defaults), or raise
        if an owner that is elsewhere holds data. Returns what undoes the move."""
        device = x.device
        for name in self._owners:
            metric = self._metrics[name]
            if metric.device != device and metric._updated:
                raise metric._device_mismatch(
                    type(metric).update, args, kwargs, x, where=f"the state of this collection's metric '{name}' is"
                )
        moved = [(m, m._placement()) for m in self._metrics.values()]
        for name, metric in self._metrics.items():
            metric._place(device, states=self._owner_of[name] == name)
            metric.__dict__["_cache"] = None
        self._alias_shared()
        return moved

    @torch.jit.unused
    @locked
    def forward(self, *args: Any, **kwargs: Any) -> Dict[str, Any]:
        """{key: the metric over this batch alone}, with the batch accumulated too: one update
        per shared state, then each owner's accumulated states combined with the batch's."""
        x = first_tensor(args, kwargs)
        if x is not None and any(m.device != x.device for m in self._update_order):
            self._follow_device(x, args, kwargs)  # raises if an owner holds data elsewhere
        owners = self._update_order
        held = [m._hold_states() for m in owners]
        for m in owners:
            m._reset_states()
            m.__dict__["_updated"] = False
        self._alias_shared()
        try:
            self.update(*args, **kwargs)
            values = self._batch_values()
        except BaseException:
            for m, h in zip(owners, held):
                m._restore_states(h)
            self._alias_shared()
            raise
        try:  # every owner's combination first: a merge may refuse a pair, and then none changes
            combined = [None if m.full_state_update is not False else _combined_states(m, h)
                        for m, h in zip(owners, held)]
        except BaseException:
            for m, h in zip(owners, held):
                m._restore_states(h)
            self._alias_shared()
            raise
        for m, h, states in zip(owners, held, combined):
            if states is not None:
                _assign_combined(m, states, h)
        again = [(m, h) for m, h, states in zip(owners, held, combined) if states is None]
        if again:  # metrics whose update reads their state: their accumulated states, updated again
            self._update_again(again, args, kwargs)
        self._alias_shared()
        return self._renamed(values)

    def _update_again(self, owners_held: List[Tuple[Metric, Any]], args: tuple, kwargs: dict) -> None:
        for m, h in owners_held:
            m._restore_states(h)
        try:
            for m, _ in owners_held:
                m.update(*args, **(m.accepted_update_kwargs(kwargs) if kwargs else kwargs))
        except BaseException:  # the batch was accepted once, so unlikely: leave them as before it
            for m, h in owners_held:
                m._restore_states(h)
            self._alias_shared()
            raise

    def _batch_values(self) -> Dict[str, Any]:
        """Every metric's value on the states of the batch just updated."""
        metrics = self._metrics
        synced = None
        if any(m.dist_sync_on_step for m in metrics.values()) and self._should_sync():
            synced = self._compute_synced(dirty=True)  # one packed sync for the ones that ask
        return {name: synced[name] if synced is not None and m.dist_sync_on_step else m._compute_with(None)
                for name, m in metrics.items()}

    def _should_sync(self) -> bool:
        return self.sync_on_compute and dist.needs_sync(self.process_group)

    @locked
    def compute(self) -> Dict[str, Any]:
        """{key: result} for every metric; one packed sync for all of them when needed. The
        results are copies: editing one changes no cached result."""
        return caller_copy(self._renamed(self._compute_by_name()))

    def _compute_by_name(self) -> Dict[str, Any]:
        metrics = self._metrics
        rejected = next((e for e in (metrics[n]._rejected_cuda_update() for n in self._owners) if e), None)
        cached = all(m._cache is not None for m in metrics.values())
        if self._should_sync():
            return self._compute_synced(dirty=not cached, rejected=rejected)
        if rejected is not None:
            raise rejected
        if cached:
            return {name: m._cache[0] for name, m in metrics.items()}
        not_updated = [n for n in self._owners if not metrics[n]._updated]
        if not_updated:
            self._never_updated(not_updated, "on this rank")
        results = {}
        for name, metric in metrics.items():
            results[name] = metric._compute_with(None)
            if metric.compute_with_cache:
                metric.__dict__["_cache"] = (results[name],)
        return results

    @locked
    def compute_local(self) -> Dict[str, Any]:
        """{key: compute_local()}: every metric on this rank's state only."""
        return self._renamed({name: metric.compute_local() for name, metric in self._metrics.items()})

    def _compute_synced(self, dirty: bool, rejected: Optional[ValueError] = None) -> Dict[str, Any]:
        owners = [self._metrics[n] for n in self._owners]
        names_per_owner = [list(m._specs) for m in owners]
        slots = [(u, state) for u, names in enumerate(names_per_owner) for state in names]

        def require_updates(updated_anywhere: List[bool]) -> None:
            never = [self._owners[u] for u, ok in enumerate(updated_anywhere) if not ok]
            if never:
                self._never_updated(never, "on any rank")

        def merge(i: int, values: List[torch.Tensor]) -> torch.Tensor:
            u, state = slots[i]
            return owners[u].merge_state_values(state, values)

        synced = sync_states(
            self._sync_plan(),
            [v for m in owners for v in m._state_values()],
            group=self.process_group,
            timeout_s=self.sync_timeout,
            recipient=self.recipient_rank,
            updated=[m._updated for m in owners],
            merge=merge,
            on_header=require_updates,
            dirty=dirty,
            local_error=rejected,
        )
        if synced is UNCHANGED:  # nobody has new data: every rank keeps its cached results
            return {name: m._cache[0] for name, m in self._metrics.items()}
        per_owner: List[Optional[Dict[str, torch.Tensor]]] = [None] * len(owners) if synced is None else [
            {} for _ in owners
        ]
        if synced is not None:
            for (u, state), value in zip(slots, synced):
                per_owner[u][state] = value  # type: ignore[index]
        position = {name: u for u, name in enumerate(self._owners)}
        results = {}
        for name, metric in self._metrics.items():
            states = per_owner[position[self._owner_of[name]]]
            results[name] = None if states is None else metric._compute_with(states)
            metric.__dict__["_cache"] = (results[name],)
        return results

    def _sync_plan(self) -> SyncPlan:
        owners = [self._metrics[n] for n in self._owners]
        key = tuple((id(m), m._spec_version) for m in self._metrics.values())  # _spec_version: options too
        if self._plan is None or self._plan_key != key:
            specs = [s for u, m in enumerate(owners) for s in m._state_specs(f"{self._owners[u]}=", unit=u)]
            options = [(f"metric '{name}' ({type(m).__name__})", m.described_options)
                       for name, m in self._metrics.items()]
            self._plan = SyncPlan(specs, n_units=len(owners), options=options)
            self._plan_key = key
        return self._plan

    def _never_updated(self, names: List[str], where: str) -> None:
        message = f"MetricCollection.compute(): metric(s) {names} had no update() {where} since the last reset()"
        if self._if_never_updated == "raise":
            raise NotComputableError(message)
        warnings.warn(message + ": their results are computed over no data.", UserWarning, stacklevel=4)

    @contextlib.contextmanager
    def raising_if_never_updated(self) -> Iterator["MetricCollection"]:
        """Within this context, compute() raises NotComputableError for metrics no rank updated
        since their reset (ignite's rule), instead of warning (torchmetrics')."""
        before, self._if_never_updated = self._if_never_updated, "raise"
        try:
            yield self
        finally:
            self._if_never_updated = before

    def _renamed(self, results: Dict[str, Any]) -> Dict[str, Any]:
        """Results keyed as the user sees them: a dict result is flattened into its own keys
        (prefixed with its metric's key where two would collide); prefix and postfix added."""
        flat: Dict[str, Any] = {}
        dict_keys = [k for r in results.values() if isinstance(r, dict) for k in r]
        collide = len(dict_keys) != len(set(dict_keys))
        for name, value in results.items():
            if isinstance(value, dict):
                for key, inner in value.items():
                    flat[f"{name}_{key}" if collide else key] = inner
            else:
                flat[name] = value
        if not self.prefix and not self.postfix:
            return flat
        return {self._set_name(k): v for k, v in flat.items()}

    def _set_name(self, base: str) -> str:
        return f"{self.prefix or ''}{base}{self.postfix or ''}"

    # -- lifecycle ----------------------------------------------------------------------

    @locked
    def reset(self) -> "MetricCollection":
        for name in self._owners:
            self._metrics[name].reset()
        for name in self._metrics:
            self._metrics[name].__dict__["_cache"] = None
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
                    metric._check_options_of(other._metrics[name], "merge_state")
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

    @locked
    def load_state_dict(self, state_dict: Mapping[str, Any], strict: bool = True, assign: bool = False) -> Any:
        """nn.Module's load_state_dict; every metric's entries (and the options they were saved
        with) are checked before any is assigned, and shared states stay shared (the owner's
        entry wins)."""
        missing: List[str] = []
        unexpected = [k for k in state_dict if k.partition(".")[0] not in self._metrics]
        for name, metric in self._metrics.items():
            prefix = f"{name}."
            metric._check_state_dict({k[len(prefix):]: v for k, v in state_dict.items() if k.startswith(prefix)},
                                     strict=False)
            try:
                metric._check_saved_options(state_dict, prefix)
            except ValueError as exc:
                raise ValueError(f"MetricCollection metric '{name}': {exc}") from None
            problems = metric._key_problems(state_dict, prefix)
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
                metric._raise_rejected_cuda_updates()
        super()._apply(fn, *args, **kwargs)
        for name, owner in self._owner_of.items():
            if owner != name:  # its states are the owner's (aliased below); move its defaults
                self._metrics[name]._place(self._metrics[owner].device, states=False)
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

    # -- mapping protocol (keys with prefix and postfix, unless keep_base) ------------------

    def __getitem__(self, key: str, copy_state: bool = True) -> Metric:
        if self.prefix and key.startswith(self.prefix):
            key = key[len(self.prefix):]
        if self.postfix and key.endswith(self.postfix):
            key = key[: len(key) - len(self.postfix)]
        return self._metrics[key]

    def __contains__(self, key: object) -> bool:
        return key in self._metrics

    def __iter__(self) -> Iterator[str]:
        return iter(self.keys())

    def __len__(self) -> int:
        return len(self._metrics)

    def keys(self, keep_base: bool = False) -> Iterable[str]:
        """The metric keys; with prefix and postfix unless ``keep_base``."""
        if keep_base or (not self.prefix and not self.postfix):
            return self._metrics.keys()
        return [self._set_name(k) for k in self._metrics]

    def items(self, keep_base: bool = False, copy_state: bool = True) -> Iterable[Tuple[str, Metric]]:
        """(key, metric) pairs. Shared states stay shared whatever ``copy_state`` says: a metric
        read from the collection sees its group's state."""
        if keep_base or (not self.prefix and not self.postfix):
            return self._metrics.items()
        return [(self._set_name(k), m) for k, m in self._metrics.items()]

    def values(self, copy_state: bool = True) -> Iterable[Metric]:
        return self._metrics.values()

    def __repr__(self) -> str:
        shared = {n: o for n, o in self._owner_of.items() if n != o}
        affixes = "".join(f", {a}={getattr(self, a)!r}" for a in ("prefix", "postfix") if getattr(self, a))
        return f"MetricCollection({list(self._metrics)}{affixes}, shared={shared})"


def _entries(metrics: Any, additional: Tuple[Any, ...]) -> List[Tuple[str, Metric]]:
    """(key, metric) pairs from the constructor's / add_metrics' arguments, nested collections
    flattened, as torchmetrics names them."""
    if isinstance(metrics, Metric):
        metrics = [metrics]
    if isinstance(metrics, Sequence) and not isinstance(metrics, (str, bytes)):
        metrics = list(metrics)
        ignored = []
        for extra in additional:
            (metrics if isinstance(extra, (Metric, MetricCollection)) else ignored).append(extra)
        if ignored:
            warnings.warn(f"You have passed extra arguments {ignored} which are not `Metric` so they will be ignored.")
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
                raise ValueError(f"Input {value!r} to `MetricCollection` is not an instance of torchtally.Metric "
                                 "or torchtally.MetricCollection")
        return entries
    raise ValueError(
        "Unknown input to MetricCollection. Expected a Metric, a MetricCollection or a dict/sequence of them, "
        f"got {type(metrics).__name__}"
    )


def _combined_states(metric: Metric, held: Any) -> Dict[str, Any]:
    """``metric``'s accumulated states (``held``) combined with the batch's it now holds, by each
    state's reduce; nothing is assigned (a merge may raise)."""
    d = metric.__dict__
    combined: Dict[str, Any] = {}
    for name, (reduce, _) in metric._specs.items():
        if reduce == "cat":
            combined[name] = held.values[name] + metric._cat_chunks[name]
        else:
            combined[name] = metric._combine_states(name, [held.values[name], d[name]])
    return combined


def _assign_combined(metric: Metric, combined: Dict[str, Any], held: Any) -> None:
    d = metric.__dict__
    for name, value in combined.items():
        if name in metric._cat_chunks:
            metric._cat_chunks[name] = value
        else:
            d[name] = value
    d["_updated"], d["_update_count"], d["_cache"] = True, held.update_count + 1, None


def _fixed_state_bytes(metric: Metric) -> int:
    return sum(d.numel() * d.element_size() for reduce, d in metric._specs.values() if reduce != "cat")


def _snapshot_states(metric: Metric) -> Dict[str, Tuple[Any, Any]]:
    """{state: (the object the metric holds, what restores it)}: a clone for a fixed or merge
    state, the length of a cat state's block list."""
    saved: Dict[str, Tuple[Any, Any]] = {}
    for name in metric._specs:
        chunks = metric._cat_chunks.get(name)
        if chunks is not None:
            saved[name] = (chunks, len(chunks))
        else:
            value = metric.__dict__[name]
            saved[name] = (value, value.clone())
    return saved


def _restore_states(metric: Metric, saved: Dict[str, Tuple[Any, Any]]) -> None:
    """Put back the objects ``_snapshot_states`` saw, with their contents then (in place, so that
    every alias of them sees the restored value)."""
    for name, (held, before) in saved.items():
        if name in metric._cat_chunks:
            del held[before:]
            metric._cat_chunks[name] = held
        else:
            held.copy_(before)
            metric.__dict__[name] = held
