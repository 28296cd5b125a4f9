"""Compute over every rank, for a Metric and a MetricCollection: when to sync, the one call
into the packed sync (torchtally.sync.protocol), the synced states swapped in for one compute,
and the rule for a metric no rank updated (torchmetrics warns, ignite raises).

``Synced`` is what the two share; ``SyncedMetric`` adds a metric's sync plan, ``compute_on`` and
torchmetrics' manual ``sync()`` / ``unsync()`` / ``sync_context()``; ``SyncedCollection`` adds a
collection's compute: one packed sync of every member's states (a shared state once), the
results split back per member. The collection works on its members through Metric's interface
(``has_data``, ``cached_result``, ``compute_on``, ``state_specs``...).
"""

import contextlib
import warnings
from typing import TYPE_CHECKING, Any, Callable, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple

import torch

from ..errors import NotComputableError, stacklevel_outside_torchtally
from ..sync import dist
from ..sync.plan import SyncPlan
from ..sync.protocol import UNCHANGED, sync_states
from .guard import caller_copy, locked

if TYPE_CHECKING:
    from typing import Protocol

    from ..sync.fingerprint import OptionTexts
    from ..sync.plan import StateSpec
    from .states import HeldStates

    class SyncedMember(Protocol):
        """What SyncedCollection uses of its members (Metric's interface; synced.py cannot import
        base/metric.py, which imports it)."""

        compute_with_cache: bool

        @property
        def cached_result(self) -> Optional[Tuple[Any]]: ...
        @property
        def has_data(self) -> bool: ...
        @property
        def declaration_version(self) -> int: ...
        @property
        def described_options(self) -> OptionTexts: ...
        @property
        def state_names(self) -> Tuple[str, ...]: ...
        def rejected_cuda_update(self) -> Optional[ValueError]: ...
        def compute_on(
            self, states: Optional[Dict[str, torch.Tensor]], compute: Optional[Callable[[Any], Any]] = None
        ) -> Any: ...
        def compute_local(self) -> Any: ...
        def value_request(self) -> Optional[Tuple[Callable[..., Any], Any]]: ...
        def keep_result(self, result: Any) -> None: ...
        def state_values(self) -> List[torch.Tensor]: ...
        def sync_values(self) -> Tuple[List[Any], Optional[Exception]]: ...
        def merge_synced_values(self, name: str, values: List[torch.Tensor]) -> Any: ...
        def state_specs(self, label_prefix: str = "", unit: int = 0) -> List[StateSpec]: ...


# The attribute under which Metric's wrapped ``compute`` keeps (itself, the subclass's own
# function), so that compute_on (already under the metric's lock, at every step under a
# per-step sync) calls the function directly instead of going through the wrapper. Only when the
# class's compute is that very wrapper: a user's decorator around an inherited compute
# (functools.wraps copies the attribute) must still run.
SUBCLASS_COMPUTE = "_torchtally_subclass_compute"


class Synced:
    """Mixin of Metric and MetricCollection: the sync options (``sync_on_compute``,
    ``process_group``, ``sync_timeout``, ``recipient_rank``; a metric also has
    ``distributed_available_fn``) applied the same way for both. A host names its plan units
    (``_unit_names``) and says what a compute with no update anywhere warns
    (``_never_updated_message``)."""

    if TYPE_CHECKING:  # the host's sync options (Metric's and MetricCollection's __init__)
        sync_on_compute: bool
        process_group: Optional[Any]
        sync_timeout: float
        recipient_rank: Optional[int]

    def _should_sync(self) -> bool:
        if not self.sync_on_compute:
            return False
        available = self.__dict__.get("distributed_available_fn")  # a metric's; a collection has none
        if available is not None and not available():
            return False
        return dist.needs_sync(self.process_group)

    def _sync(
        self,
        plan: SyncPlan,
        values: Sequence[Any],
        updated: List[bool],
        merge: Callable[[int, List[torch.Tensor]], torch.Tensor],
        dirty: bool,
        rejected: Optional[Exception],
        group: Optional[Any] = None,
    ) -> Any:
        """One packed sync of ``values`` (the plan's states, in plan order): the synced values,
        UNCHANGED (no rank has new data) or None (a rank that is not the recipient)."""
        return sync_states(
            plan,
            values,
            group=self.process_group if group is None else group,
            timeout_s=self.sync_timeout,
            recipient=self.recipient_rank,
            updated=updated,
            merge=merge,
            on_header=self._require_updates,
            dirty=dirty,
            local_error=rejected,
        )

    def _require_updates(self, updated_anywhere: List[bool]) -> None:
        """The sync's on_header: the rule for plan units no rank updated."""
        if all(updated_anywhere):  # the common case, at every step of a per-step sync
            return
        never = [name for name, ok in zip(self._unit_names(), updated_anywhere) if not ok]
        if never:
            self._never_updated(local=False, names=never)

    def _unit_names(self) -> List[str]:
        raise NotImplementedError

    def _never_updated_message(self, names: List[str], where: str) -> str:
        raise NotImplementedError

    def _never_updated(self, local: bool, names: Optional[List[str]] = None) -> None:
        """compute() over units (``names``, default: every unit) with no update on this rank
        (``local``) or on any rank: torchmetrics warns and computes over the empty state; within
        ``raising_if_never_updated`` (ignite's rule) NotComputableError is raised."""
        names = self._unit_names() if names is None else names
        message = self._never_updated_message(names, "on this rank" if local else "on any rank")
        if self.__dict__["_if_never_updated"] == "raise":
            raise NotComputableError(message)
        warnings.warn(message, UserWarning, stacklevel=stacklevel_outside_torchtally())

    @contextlib.contextmanager
    def raising_if_never_updated(self) -> Iterator["Synced"]:
        """Within this context, compute() raises NotComputableError when no rank updated a metric
        since its reset (ignite's rule), instead of warning (torchmetrics')."""
        d = self.__dict__  # a plain attribute: skip nn.Module's __setattr__ (every step, per-step usages)
        before, d["_if_never_updated"] = d["_if_never_updated"], "raise"
        try:
            yield self
        finally:
            d["_if_never_updated"] = before


class SyncedMetric(Synced):
    """Mixin of Metric: its sync plan, its compute on given states, and the manual sync."""

    if TYPE_CHECKING:  # Metric's, set in its __init__ (base/metric.py) and by its other mixins
        _specs: Dict[str, Tuple[str, torch.Tensor]]
        _cat_chunks: Dict[str, List[torch.Tensor]]
        _plan: Optional[SyncPlan]
        _updated: bool
        dist_sync_fn: Optional[Callable[..., Any]]
        distributed_available_fn: Optional[Callable[[], bool]]

        @property
        def described_options(self) -> OptionTexts: ...
        def compute(self) -> Any: ...
        def sync_values(self) -> Tuple[List[Any], Optional[Exception]]: ...
        def merge_synced_values(self, name: str, values: List[torch.Tensor]) -> Any: ...
        def gathered_state(self, name: str, gather: Callable[..., Any], group: Any) -> Any: ...
        def state_specs(self, label_prefix: str = "", unit: int = 0) -> List[StateSpec]: ...
        def _set_states(self, states: Dict[str, torch.Tensor]) -> None: ...
        def hold_states(self) -> HeldStates: ...
        def restore_states(self, held: HeldStates) -> None: ...
        def settle_states(self) -> None: ...

    def _unit_names(self) -> List[str]:
        return [type(self).__name__]

    def _never_updated_message(self, names: List[str], where: str) -> str:
        if self.__dict__["_if_never_updated"] == "raise":
            return (
                f"{type(self).__name__}.compute() needs at least one update() {where} since the last reset(); "
                "none was made"
            )
        return (
            f"The ``compute`` method of metric {type(self).__name__} was called before the ``update`` method "
            f"({where}): the result is computed over no data."
        )

    def compute_on(
        self, states: Optional[Dict[str, torch.Tensor]], compute: Optional[Callable[[Any], Any]] = None
    ) -> Any:
        """Run the subclass's compute, on ``states`` swapped in for the call when given.
        ``compute``: the function to run instead of the class's compute (Metric's compute wrapper
        passes the function it wraps: a decorator around it has run already)."""
        d = self.__dict__
        if compute is None:
            compute = type(self).compute
            direct = getattr(compute, SUBCLASS_COMPUTE, None)
            if direct is not None and direct[0] is compute:
                compute = direct[1]
        if states is None:  # this metric's own states: nothing to swap (a compute at every step)
            d["_computing"] = True
            try:
                return compute(self)
            finally:
                d["_computing"] = False
        self.settle_states()  # the states are swapped in __dict__ (base/pending.py)
        chunks = self._cat_chunks
        saved: Dict[str, Any] = {}  # the original objects (cat lists may be shared in a collection)
        d["_computing"] = True
        try:
            for name, value in states.items():
                if name in chunks:
                    saved[name], chunks[name] = chunks[name], [value]
                else:
                    saved[name], d[name] = d[name], value
            return compute(self)
        finally:
            d["_computing"] = False
            for name, old in saved.items():
                if name in chunks:
                    chunks[name] = old
                else:
                    d[name] = old

    def _compute_synced(
        self,
        cache: Optional[Tuple[Any]],
        rejected: Optional[Exception] = None,
        compute: Optional[Callable[[Any], Any]] = None,
    ) -> Any:
        synced = self._synced_states(dirty=cache is None, rejected=rejected)
        if synced is UNCHANGED:
            return cache[0]  # type: ignore[index]
        if synced is None:
            return None
        return self.compute_on(synced, compute)

    def _synced_states(
        self,
        dirty: bool = True,
        rejected: Optional[Exception] = None,
        gather_fn: Optional[Callable[..., Any]] = None,
        group: Optional[Any] = None,
    ) -> Any:
        """Every rank's states combined: {name: tensor}, UNCHANGED (nobody has new data), or None
        on a rank that is not the recipient."""
        names = list(self._specs)
        gather_fn = gather_fn or self.dist_sync_fn
        if gather_fn is not None:
            if rejected is not None:
                raise rejected
            group = self.process_group if group is None else group
            return {n: self.gathered_state(n, gather_fn, group) for n in names}
        values, packing_error = self.sync_values()  # a list state this rank cannot send: announced
        synced = self._sync(
            self._sync_plan(),
            values,
            [self._updated],
            lambda i, values: self.merge_synced_values(names[i], values),
            dirty,
            rejected or packing_error,
            group,
        )
        if synced is UNCHANGED or synced is None:
            return synced
        return dict(zip(names, synced))

    def _sync_plan(self) -> SyncPlan:
        if self._plan is None:
            options = [(type(self).__name__, self.described_options)]
            self.__dict__["_plan"] = SyncPlan(self.state_specs(), n_units=1, options=options)
        return self._plan  # type: ignore[return-value]  # set through __dict__ just above

    # -- torchmetrics' manual sync ------------------------------------------------------

    @locked
    def sync(
        self,
        dist_sync_fn: Optional[Callable[..., Any]] = None,
        process_group: Optional[Any] = None,
        should_sync: bool = True,
        distributed_available: Optional[Callable[[], bool]] = None,
    ) -> None:
        """Replace the local states with every rank's combined states until ``unsync()``."""
        d = self.__dict__
        if d["_local_while_synced"] is not None and should_sync:
            raise RuntimeError("The Metric has already been synced.")
        available = distributed_available or self.distributed_available_fn
        group = self.process_group if process_group is None else process_group
        is_distributed = available() if callable(available) else dist.needs_sync(group)
        if not should_sync or not is_distributed:
            return
        synced = self._synced_states(gather_fn=dist_sync_fn, group=group)
        d["_local_while_synced"] = self.hold_states()
        if synced is not None:
            self._set_states(synced)

    @locked
    def unsync(self, should_unsync: bool = True) -> None:
        """Put back the local states that ``sync()`` replaced."""
        if not should_unsync:
            return
        held = self.__dict__["_local_while_synced"]
        if held is None:
            raise RuntimeError("The Metric has already been un-synced.")
        self.restore_states(held)
        self.__dict__["_local_while_synced"] = None

    @contextlib.contextmanager
    def sync_context(
        self,
        dist_sync_fn: Optional[Callable[..., Any]] = None,
        process_group: Optional[Any] = None,
        should_sync: bool = True,
        should_unsync: bool = True,
        distributed_available: Optional[Callable[[], bool]] = None,
    ) -> Iterator[None]:
        self.sync(dist_sync_fn, process_group, should_sync, distributed_available)
        try:
            yield
        finally:
            self.unsync(should_unsync=self.__dict__["_local_while_synced"] is not None and should_unsync)


# A collection's plan parts (see SyncedCollection._sync_parts): the plan, the owners (plan units),
# each plan state's (unit, state name), each member's unit, each owner's (state names, start, end).
PlanParts = Tuple[SyncPlan, List[Any], List[Tuple[int, str]], Dict[str, int], List[Tuple[List[str], int, int]]]


class SyncedCollection(Synced):
    """Mixin of MetricCollection: every member's result, from one packed sync of the owners'
    states when the collection has to sync."""

    if TYPE_CHECKING:  # MetricCollection's (base/collection.py, base/members.py)
        _owners: List[str]
        _owner_of: Dict[str, str]
        _plan: Optional[SyncPlan]
        _plan_key: Optional[Tuple[Any, ...]]
        _plan_parts: Optional["PlanParts"]
        prefix: Optional[str]
        postfix: Optional[str]

        @property
        def _metrics(self) -> Mapping[str, SyncedMember]: ...
        def _renamed(self, results: Dict[str, Any]) -> Dict[str, Any]: ...

    def _unit_names(self) -> List[str]:
        return self._owners

    def _never_updated_message(self, names: List[str], where: str) -> str:
        message = f"MetricCollection.compute(): metric(s) {names} had no update() {where} since the last reset()"
        if self.__dict__["_if_never_updated"] == "raise":
            return message
        return message + ": their results are computed over no data."

    @locked
    def compute(self) -> Dict[str, Any]:
        """{key: result} for every metric; one packed sync for all of them when needed. The
        results are copies: editing one changes no cached result."""
        return caller_copy(self._renamed(self._compute_by_name()))

    def _compute_by_name(self) -> Dict[str, Any]:
        metrics = self._metrics
        rejected = None
        for name in self._owners:
            rejected = metrics[name].rejected_cuda_update()
            if rejected is not None:
                break
        cached = all(m.cached_result is not None for m in metrics.values())
        if self._should_sync():
            return self._compute_synced(dirty=not cached, rejected=rejected)
        if rejected is not None:
            raise rejected
        if cached:  # every metric has a cached result
            return {name: m.cached_result[0] for name, m in metrics.items()}  # type: ignore[index]
        not_updated = [n for n in self._owners if not metrics[n].has_data]
        if not_updated:
            self._never_updated(local=True, names=not_updated)
        results = self.values_on(list(metrics), lambda name: None)
        for name, metric in metrics.items():
            if metric.compute_with_cache:
                metric.keep_result(results[name])
        return results

    @locked
    def compute_local(self) -> Dict[str, Any]:
        """{key: compute_local()}: every metric on this rank's state only."""
        return self._renamed({name: metric.compute_local() for name, metric in self._metrics.items()})

    def _compute_synced(self, dirty: bool, rejected: Optional[Exception] = None) -> Dict[str, Any]:
        plan, owners, _, unit_of, spans = self._sync_parts()
        values: List[Any] = []
        for m in owners:
            mine, packing_error = m.sync_values()  # a list state this rank cannot send: announced
            values += mine
            rejected = rejected or packing_error
        synced = self._sync(plan, values, [m.has_data for m in owners], self._merge_synced, dirty, rejected)
        if synced is UNCHANGED:  # nobody has new data: every rank keeps its cached results
            # (not dirty: every metric has one)
            return {name: m.cached_result[0] for name, m in self._metrics.items()}  # type: ignore[index]
        # each owner's synced states by name (None on a rank that is not the recipient)
        if synced is None:
            results: Dict[str, Any] = dict.fromkeys(self._metrics)
        else:
            per_owner = [dict(zip(names, synced[start:end])) for names, start, end in spans]
            results = self.values_on(list(self._metrics), lambda name: per_owner[unit_of[name]])
        for name, metric in self._metrics.items():
            metric.keep_result(results[name])
        return results

    def values_on(
        self, names: List[str], states_of: Callable[[str], Optional[Dict[str, torch.Tensor]]]
    ) -> Dict[str, Any]:
        """``compute_on(states_of(name))`` of each member ``names`` (None: its own states), with one
        finisher call for the members of one state that declare a ``value_request`` (the count
        family's accuracy, precision, recall, F1... of one confusion matrix: one call into the C
        core for all of them)."""
        metrics, values = self._metrics, {}
        batches: Dict[Tuple[str, Any], List[Tuple[str, Any]]] = {}
        for name in names:
            request = metrics[name].value_request()
            if request is None:
                values[name] = metrics[name].compute_on(states_of(name))
            else:
                batches.setdefault((self._owner_of[name], request[0]), []).append((name, request[1]))
        for (owner, finisher), members in batches.items():
            results = finisher(metrics[owner], states_of(owner), [r for _, r in members])
            values.update(zip([n for n, _ in members], results))
        return {name: values[name] for name in names}

    def _merge_synced(self, i: int, values: List[torch.Tensor]) -> torch.Tensor:
        """The sync's merge for plan state i (a "merge" state of one owner)."""
        _, owners, slots, _, _ = self._sync_parts()
        u, state = slots[i]
        return owners[u].merge_synced_values(state, values)

    def _sync_plan(self) -> SyncPlan:
        return self._sync_parts()[0]

    def _sync_parts(self) -> PlanParts:
        """The plan parts (see PlanParts) of the owners' states; built again only when the
        metrics or their declarations change, not at every sync."""
        # options count too; the collection's own affixes name its results (keys differing by rank)
        affixes = {"prefix": repr(self.prefix), "postfix": repr(self.postfix)}
        key = (tuple(affixes.values()),) + tuple((id(m), m.declaration_version) for m in self._metrics.values())
        if self._plan_parts is None or self._plan_key != key:
            owners = [self._metrics[n] for n in self._owners]
            specs = [s for u, m in enumerate(owners) for s in m.state_specs(f"{self._owners[u]}=", unit=u)]
            options = [("MetricCollection", affixes)] + [
                (f"metric '{name}' ({type(m).__name__})", m.described_options) for name, m in self._metrics.items()
            ]
            self._plan = SyncPlan(specs, n_units=len(owners), options=options)  # shared by a clone
            self._plan_key = key
            position = {name: u for u, name in enumerate(self._owners)}
            unit_of = {name: position[self._owner_of[name]] for name in self._metrics}
            spans, start = [], 0
            for m in owners:
                names = list(m.state_names)
                spans.append((names, start, start + len(names)))
                start += len(names)
            slots = [(u, state) for u, (names, _, _) in enumerate(spans) for state in names]
            self._plan_parts = (self._plan, owners, slots, unit_of, spans)
        return self._plan_parts
