"""MetricCollection: update and compute many metrics, sharing state and syncing it in one pass."""
import copy
from typing import Any, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple, Union

import torch

from . import dist
from ._group_copy import GroupBoundCopy
from .errors import NotComputableError
from .metric import Metric, _canonical_device, first_tensor
from .sync import UNCHANGED, SyncPlan, sync_states


class MetricCollection(GroupBoundCopy):
    """A named group of metrics updated with the same inputs and synced together.

    * ``update(*args, **kwargs)`` calls ``update`` of every metric with the same arguments,
      except that metrics with equal non-None ``state_key`` share one state: only the first of
      them (its *owner*) is updated, the others read the owner's state.
    * ``compute()`` returns ``{name: result}``. When it has to sync (torch.distributed
      initialised, world size > 1, ``sync_on_compute``), all metrics' states go through one
      packed sync: a header, one all_reduce per (dtype, op) group and at most one gather,
      however many metrics there are; a shared state is sent once. It is then a collective:
      every rank calls it (a repeated compute with no new data anywhere costs the header only).

    The collection's sync options (same meaning as Metric's) apply to all its metrics.
    A batch that one metric rejects (its ``update`` raises) leaves the whole collection as it
    was: states, "updated" flags and cached results (see ``update``).

    Example:

        >>> import torch
        >>> from torchtally import Metric, MetricCollection
        >>> class Total(Metric):
        ...     def __init__(self, **kw):
        ...         super().__init__(**kw)
        ...         self.add_state("total", torch.tensor(0.0), reduce="sum")
        ...     def update(self, x):
        ...         self.total = self.total + x.sum()
        ...     def compute(self):
        ...         return self.total
        >>> class Largest(Metric):
        ...     def __init__(self, **kw):
        ...         super().__init__(**kw)
        ...         self.add_state("largest", torch.tensor(float("-inf")), reduce="max")
        ...     def update(self, x):
        ...         self.largest = torch.maximum(self.largest, x.max())
        ...     def compute(self):
        ...         return self.largest
        >>> metrics = MetricCollection({"total": Total(), "largest": Largest()})
        >>> metrics.update(torch.tensor([1.0, 5.0])).compute()
        {'total': tensor(6.), 'largest': tensor(5.)}
    """

    _reset_on_pickle = {**GroupBoundCopy._reset_on_pickle, "_plan_key": None}

    def __init__(
        self,
        metrics: Union[Mapping[str, Metric], Sequence[Metric]],
        *,
        sync_on_compute: bool = True,
        process_group: Optional[Any] = None,
        sync_timeout: Optional[dist.TimeoutLike] = None,
        recipient_rank: Optional[int] = None,
    ) -> None:
        if isinstance(metrics, Mapping):
            items = list(metrics.items())
        elif isinstance(metrics, Sequence) and not isinstance(metrics, (str, bytes)):
            items = [(type(m).__name__, m) for m in metrics]
        else:
            raise TypeError(f"metrics must be a dict of name -> Metric or a list of Metric, got {type(metrics).__name__}")
        self._metrics: Dict[str, Metric] = {}
        seen: Dict[int, str] = {}
        for name, metric in items:
            if not isinstance(name, str) or not name:
                raise ValueError(f"metric names must be non-empty strings, got {name!r}")
            if not isinstance(metric, Metric):
                raise TypeError(f"metrics['{name}']: expected a torchtally.Metric, got {type(metric).__name__}")
            if name in self._metrics:
                raise ValueError(f"two metrics are named '{name}'; pass a dict with distinct names")
            if id(metric) in seen:
                raise ValueError(f"metrics '{seen[id(metric)]}' and '{name}' are the same object")
            seen[id(metric)] = name
            self._metrics[name] = metric
        if recipient_rank is not None and (not isinstance(recipient_rank, int) or recipient_rank < 0):
            raise ValueError(f"recipient_rank must be None or a rank >= 0, got {recipient_rank!r}")
        self.sync_on_compute = bool(sync_on_compute)
        self.process_group = process_group
        self.sync_timeout = dist.timeout_seconds(sync_timeout)
        self.recipient_rank = recipient_rank
        self._owner_of: Dict[str, str] = self._share_states()
        self._owners: List[str] = [n for n in self._metrics if self._owner_of[n] == n]
        # Update order: the owner with the most fixed-state bytes last, as the last one needs no
        # snapshot (see update).
        self._update_order: List[Metric] = sorted((self._metrics[n] for n in self._owners), key=_fixed_state_bytes)
        self._plan: Optional[SyncPlan] = None
        self._plan_key: Optional[Tuple] = None
        self._alias_shared()

    # -- state sharing ------------------------------------------------------------------

    def _share_states(self) -> Dict[str, str]:
        """Map every metric name to the name of the metric that owns its state."""
        owner_of, owner_by_key = {}, {}
        for name, metric in self._metrics.items():
            key = metric.state_key
            if key is None:
                owner_of[name] = name
                continue
            try:
                owner = owner_by_key.setdefault(key, name)
            except TypeError as exc:
                raise TypeError(f"metrics['{name}'].state_key must be hashable, got {key!r}") from exc
            if owner != name and _state_layout(metric) != _state_layout(self._metrics[owner]):
                raise ValueError(
                    f"metrics '{owner}' and '{name}' have the same state_key {key!r} but declare different "
                    f"states ({_state_layout(self._metrics[owner])} vs {_state_layout(metric)}); a state_key "
                    "must determine the state completely"
                )
            owner_of[name] = owner
        return owner_of

    def _alias_shared(self) -> None:
        """Point every sharing metric at its owner's current state (cheap: no copies)."""
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
                member.device = owner.device
            member.__dict__["_updated"] = owner._updated
            member.__dict__["_cache"] = None

    # -- update / compute ---------------------------------------------------------------

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
        flags = [(m._updated, m._cache) for m in owners]
        saved = [_snapshot_states(m) for m in owners[:-1]]
        try:
            for metric in owners:
                metric.update(*args, **kwargs)
        except BaseException:
            for metric, states in zip(owners, saved):
                _restore_states(metric, states)
            for metric, (updated, cache) in zip(owners, flags):
                metric.__dict__["_updated"], metric.__dict__["_cache"] = updated, cache
            if moved is not None:  # back to the device (and objects) from before this batch
                for metric, placement in moved:
                    metric._restore_placement(placement)
            raise  # the restored owners hold their original objects: sharing metrics still alias them
        self._alias_shared()
        return self

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

    def compute(self) -> Dict[str, Any]:
        """{name: result} for every metric; one packed sync for all of them when needed."""
        metrics = self._metrics
        rejected = next((e for e in (metrics[n]._rejected_cuda_update() for n in self._owners) if e), None)
        cached = all(m._cache is not None for m in metrics.values())
        if self.sync_on_compute and dist.needs_sync(self.process_group):
            return self._compute_synced(dirty=not cached, rejected=rejected)
        if rejected is not None:
            raise rejected
        if cached:
            return {name: m._cache[0] for name, m in metrics.items()}
        not_updated = [n for n in self._owners if not metrics[n]._updated]
        if not_updated:
            raise NotComputableError(self._not_computable_message(not_updated, "on this rank"))
        results = {}
        for name, metric in metrics.items():
            results[name] = metric._compute_with(None)
            if not metric._should_sync():
                metric.__dict__["_cache"] = (results[name],)
        return results

    def compute_local(self) -> Dict[str, Any]:
        """{name: compute_local()}: every metric on this rank's state only."""
        return {name: metric.compute_local() for name, metric in self._metrics.items()}

    def _compute_synced(self, dirty: bool, rejected: Optional[ValueError] = None) -> Dict[str, Any]:
        owners = [self._metrics[n] for n in self._owners]
        names_per_owner = [list(m._specs) for m in owners]
        slots = [(u, state) for u, names in enumerate(names_per_owner) for state in names]

        def require_updates(updated_anywhere: List[bool]) -> None:
            never = [self._owners[u] for u, ok in enumerate(updated_anywhere) if not ok]
            if never:
                raise NotComputableError(self._not_computable_message(never, "on any rank"))

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
        key = tuple((id(m), m._spec_version) for m in owners)
        if self._plan is None or self._plan_key != key:
            specs = [s for u, m in enumerate(owners) for s in m._state_specs(f"{self._owners[u]}=", unit=u)]
            self._plan = SyncPlan(specs, n_units=len(owners))
            self._plan_key = key
        return self._plan

    def _not_computable_message(self, names: List[str], where: str) -> str:
        return f"MetricCollection.compute(): metric(s) {names} had no update() {where} since the last reset()"

    # -- lifecycle ----------------------------------------------------------------------

    def reset(self) -> "MetricCollection":
        for name in self._owners:
            self._metrics[name].reset()
        for name in self._metrics:
            self._metrics[name].__dict__["_cache"] = None
        self._alias_shared()
        return self

    def merge_state(self, others: Sequence["MetricCollection"]) -> "MetricCollection":
        """Fold other collections (same names, same metrics) into this one; others unchanged."""
        others = list(others)
        for other in others:
            if not isinstance(other, MetricCollection) or list(other._metrics) != list(self._metrics):
                raise ValueError(
                    f"merge_state: expected MetricCollections with metrics {list(self._metrics)}, got "
                    f"{list(other._metrics) if isinstance(other, MetricCollection) else type(other).__name__}"
                )
        for name in self._owners:
            self._metrics[name].merge_state([o._metrics[name] for o in others])
        self._alias_shared()
        return self

    def state_dict(self) -> Dict[str, torch.Tensor]:
        """{"<metric name>.<state>": tensor} for every metric that owns its state."""
        return {
            f"{name}.{state}": value for name in self._owners for state, value in self._metrics[name].state_dict().items()
        }

    def load_state_dict(self, state_dict: Dict[str, torch.Tensor], strict: bool = True) -> "MetricCollection":
        """Load a ``state_dict()``; every entry is checked before any is assigned."""
        parts: Dict[str, Dict[str, torch.Tensor]] = {name: {} for name in self._owners}
        unexpected = []
        for key, value in state_dict.items():
            name, _, state = key.rpartition(".")
            if name in parts:
                parts[name][state] = value
            else:
                unexpected.append(key)
        if strict and unexpected:
            raise KeyError(f"MetricCollection.load_state_dict: unexpected keys {unexpected}")
        checked = {name: self._metrics[name]._check_state_dict(parts[name], strict) for name in self._owners}
        for name, states in checked.items():
            self._metrics[name].load_state_dict(states, strict=False)
        self._alias_shared()
        return self

    def to(self, device: Any) -> "MetricCollection":
        """Move every metric's states and defaults to ``device`` (shared states stay shared).
        A CUDA batch rejected on the device and not yet raised is raised first, before any
        metric moves, so that the collection is not left split across devices."""
        target = _canonical_device(device)
        for name in self._owners:
            if self._metrics[name].device != target:
                self._metrics[name]._raise_rejected_cuda_updates()
        for name in self._owners:
            self._metrics[name].to(target)
        for name, owner in self._owner_of.items():
            if owner != name:  # its states are the owner's (aliased below); move its defaults
                self._metrics[name]._place(self._metrics[owner].device, states=False)
        self._alias_shared()
        return self

    def attach(self, engine: Any, name: str, usage: Any = "epoch_wise", **kwargs: Any) -> Any:
        """Attach to a pytorch-ignite ``Engine`` as ignite's metrics do; results land in
        ``engine.state.metrics[name]``. See ``torchtally.adapters.ignite.attach`` (keyword
        options: output_transform, every, model, device); returns the driving MetricHook."""
        from .adapters.ignite import attach

        return attach(self, engine, name, usage, **kwargs)

    def clone(self) -> "MetricCollection":
        return copy.deepcopy(self)

    def __setstate__(self, state: Dict[str, Any]) -> None:
        super().__setstate__(state)
        self._alias_shared()

    # -- mapping protocol ---------------------------------------------------------------

    def __getitem__(self, name: str) -> Metric:
        return self._metrics[name]

    def __contains__(self, name: object) -> bool:
        return name in self._metrics

    def __iter__(self) -> Iterator[str]:
        return iter(self._metrics)

    def __len__(self) -> int:
        return len(self._metrics)

    def keys(self):
        return self._metrics.keys()

    def values(self):
        return self._metrics.values()

    def items(self):
        return self._metrics.items()

    def __repr__(self) -> str:
        shared = {n: o for n, o in self._owner_of.items() if n != o}
        return f"MetricCollection({list(self._metrics)}, shared={shared})"


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


def _state_layout(metric: Metric) -> List[Tuple[str, str, torch.dtype, Tuple[int, ...]]]:
    """What two metrics must agree on to share state: names, reduces, dtypes, shapes."""
    return [(name, reduce, default.dtype, tuple(default.shape)) for name, (reduce, default) in metric._specs.items()]
