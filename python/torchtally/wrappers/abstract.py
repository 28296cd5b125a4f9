"""WrapperMetric: a metric whose state is the state of the metrics it wraps, so that it syncs as one.

A wrapper (BootStrapper, MultioutputWrapper, Running ...) holds one or more copies of a wrapped
``Metric`` or ``MetricCollection``. Here the wrapper owns every copy's state: each copy's states
are declared on the wrapper itself (``add_state``, with the wrapped metric's default and reduce),
one *slot* per copy. The wrapped metric is only the code that updates and computes a state: for
each call the slot's states are put into it (``restore_states``), its ``update`` or
``compute_local`` runs, and what it left is taken back (``hold_states``); the wrapped metric then
gets its own (empty) states back. So:

* a sync of the wrapper (alone or inside a MetricCollection) packs every copy's states with
  everything else in one plan: a wrapper costs the collectives of the bare metric, not one sync
  per copy;
* ``merge_state``, ``state_dict``, ``reset``, ``forward`` (the batch's states combined with the
  accumulated ones by each state's reduce; a "merge" state by the wrapped metric's own merge) and
  the rollback of a refused batch in a collection work on the wrapper as on any metric;
* the wrapped metrics' options are part of the wrapper's (``described_options``), so ranks whose
  wrapped metrics are configured differently raise SyncError before any data moves.

Only Metric's documented interface is used on the wrapped metrics (``state_names``,
``state_reduce``, ``state_default``, ``hold_states`` / ``restore_states``, ``merge_state_values``,
``combine_states``, ``compute_local``, ``place_states``, ``described_options``).
"""

import inspect
import warnings
from contextlib import contextmanager
from typing import Any, Callable, Dict, FrozenSet, Iterator, List, Optional, Tuple, Union

import torch

from ..base.collection import MetricCollection
from ..base.metric import Metric
from ..base.states import HeldStates
from ..base.update_kwargs import update_keywords
from ..errors import stacklevel_outside_torchtally

Wrapped = Union[Metric, MetricCollection]
# (owner position, state name): one state of a wrapped metric or of an owner in a wrapped collection
StateRef = Tuple[int, str]


def warn_user(message: str) -> None:
    """A UserWarning pointing at the caller's line."""
    warnings.warn(message, UserWarning, stacklevel=stacklevel_outside_torchtally())


def updating(*args: Any, **kwargs: Any) -> Callable[[Wrapped], Any]:
    """The call ``update(*args, **kwargs)`` of a wrapped metric, for ``update_slot``."""

    def call(metric: Wrapped) -> Any:
        return metric.update(*args, **kwargs)

    return call


def check_wrapped(
    value: Any, argument: str, collections: bool = False, error: type = ValueError, torchmetrics_says: str = ""
) -> None:
    """``error`` unless ``value`` is a torchtally Metric (or, with ``collections``, a MetricCollection).

    ``torchmetrics_says``: how torchmetrics' same wrapper words the error up to the value (e.g.
    "Expected base metric to be an instance of `torchmetrics.Metric` but received"), added in
    parentheses so that code matching either message reads it."""
    kinds = (Metric, MetricCollection) if collections else (Metric,)
    if not isinstance(value, kinds):
        what = "a torchtally Metric or MetricCollection" if collections else "a torchtally Metric"
        also = f" ({torchmetrics_says} {value})" if torchmetrics_says else ""
        raise error(f"Expected argument `{argument}` to be {what}, got {type(value).__name__}: {value!r}{also}")


def _own_list(value: Any) -> Any:
    """A list (a cat state's blocks) copied; a tensor as it is."""
    return list(value) if isinstance(value, list) else value


class Engine:
    """One wrapped Metric or MetricCollection run on states given to it (module docstring)."""

    def __init__(self, target: Wrapped) -> None:
        self.target = target
        if isinstance(target, Metric):
            self.members: List[Metric] = [target]
            self.owner_of: List[int] = [0]
            owners = [target]
        else:
            by_key = dict(target.items(keep_base=True))
            keys = list(by_key)
            self.members = [by_key[k] for k in keys]
            owner_key = {k: group[0] for group in target.compute_groups.values() for k in group}
            owner_keys = list(dict.fromkeys(owner_key[k] for k in keys))
            self.owner_of = [owner_keys.index(owner_key[k]) for k in keys]
            owners = [by_key[k] for k in owner_keys]
        self.owners = owners
        self.refs: List[StateRef] = [(o, name) for o, m in enumerate(owners) for name in m.state_names]
        lists = [f"{type(owners[o]).__name__}.{n}" for o, n in self.refs if owners[o].state_reduce(n) == "list"]
        if lists:  # a wrapper declares copies of the wrapped states, and a list state has no tensor default
            raise TypeError(
                f"torchtally's wrappers do not host list states (add_state(default=[])) yet: {lists}; declare a "
                "'cat' state (append_state) in the wrapped metric instead"
            )

    def declarations(self) -> List[Tuple[StateRef, torch.Tensor, str]]:
        return [
            (ref, self.owners[ref[0]].state_default(ref[1]), self.owners[ref[0]].state_reduce(ref[1]))
            for ref in self.refs
        ]

    @contextmanager
    def lent(self, values: Dict[StateRef, Any], device: torch.device) -> Iterator[List[Any]]:
        """Inside the block the target's members hold ``values`` on ``device``; the block gets
        the members' own held states, to give back after it. An error inside gives them back
        (states and placement, as a refused first batch leaves a metric) and propagates."""
        self.refuse_direct_updates()
        moved = [(m, m.placement()) for m in self.members if m.device != device]
        for m, _ in moved:
            m.place_states(device, states=True)
        saved = [m.hold_states() for m in self.members]
        self._put(values)
        try:
            yield saved
        except BaseException:
            self._restore(saved)
            for m, placement in moved:
                m.restore_placement(placement)
            raise

    def run(
        self, values: Dict[StateRef, Any], device: torch.device, call: Callable[[Wrapped], Any]
    ) -> Tuple[Any, Dict[StateRef, Any]]:
        """``call(target)`` with ``values`` as the target's states (cat states as lists of blocks);
        returns its result and the states it left. The target gets its own states back."""
        with self.lent(values, device) as saved:
            result = call(self.target)
            held = [m.hold_states() for m in self.members]
        # the updates that ran count on the wrapped metrics, as if their own states had been updated
        # (``update_count`` read on them); the wrapper resets the counts with its states
        self._restore([s._replace(update_count=s.update_count + h.update_count) for s, h in zip(saved, held)])
        first = {o: self.owner_of.index(o) for o in range(len(self.owners))}
        return result, {(o, name): held[first[o]].values[name] for o, name in self.refs}

    def evaluate(self, values: Dict[StateRef, Any], device: torch.device, call: Callable[[Wrapped], Any]) -> Any:
        """``call(target)`` with ``values`` as the target's states, for its result only (a
        compute): ``run`` without reading back the states it leaves or adding to the update
        counts (a compute changes neither); the target gets its own states back."""
        with self.lent(values, device) as saved:
            result = call(self.target)
        self._restore(saved)
        return result

    def refuse_direct_updates(self) -> None:
        """The wrapped metrics' own states stay empty (the wrapper holds theirs and restores
        them after every call): one that holds data was updated directly
        (``bootstrapper.metrics[0].update(...)``), or was wrapped after updates; those would
        silently not count, so RuntimeError."""
        for m in self.members:
            if m.hold_flags()[0]:  # holds data (the flags alone: no state is read)
                raise RuntimeError(
                    f"a wrapped {type(m).__name__} holds updates of its own (it was updated directly, or before it "
                    "was wrapped): the wrapper keeps its wrapped metrics' states itself, so those would not count. "
                    "Update the wrapper instead, and reset() the wrapped metric"
                )

    def _put(self, values: Dict[StateRef, Any]) -> None:
        held = [
            HeldStates({name: values[(self.owner_of[i], name)] for name in m.state_names}, True, 0, None)
            for i, m in enumerate(self.members)
        ]
        self._restore(held)

    def _restore(self, held: List[HeldStates]) -> None:
        if isinstance(self.target, Metric):
            self.target.restore_states(held[0])
        else:
            self.target.restore_states(held)

    def counts(self) -> List[int]:
        """Each member's ``update_count`` (the updates run through the wrapper since its reset)."""
        return [m.hold_flags()[1] for m in self.members]

    def set_counts(self, counts: List[int]) -> None:
        for m, n in zip(self.members, counts):
            held = m.hold_states()
            if held.update_count != n:
                m.restore_states(HeldStates(held.values, held.updated, n, held.cache))

    def merge(self, ref: StateRef, values: List[torch.Tensor]) -> torch.Tensor:
        return self.owners[ref[0]].merge_state_values(ref[1], values)

    def combine(self, ref: StateRef, values: List[torch.Tensor]) -> torch.Tensor:
        return self.owners[ref[0]].combine_states(ref[1], values)

    def options(self) -> Dict[str, str]:
        """The wrapped metrics' options and classes: two slots whose wrapped classes differ
        (accuracy on one rank, precision on another) may declare identical states and options."""
        if isinstance(self.target, Metric):
            return {"class": _class_text(self.target), **self.target.described_options}
        options: Dict[str, str] = {}
        for key, m in self.target.items(keep_base=True):
            options[f"{key}.class"] = _class_text(m)
            options.update({f"{key}.{name}": text for name, text in m.described_options.items()})
        return options


def _class_text(metric: Metric) -> str:
    return f"{type(metric).__module__}.{type(metric).__qualname__}"


class WrapperMetric(Metric):
    """Base of the wrappers: a Metric whose states are its wrapped metrics' (module docstring).

    A subclass calls ``add_slot(tag, wrapped)`` in ``__init__`` for each copy whose state it
    keeps, then ``update_slot(tag, call)`` in ``update`` and ``slot_value(tag)`` in ``compute``.
    """

    # torch.jit.script(wrapper) works as for a bare metric: the properties computed from the
    # wrapped metrics are left out of the scripted module too.
    __jit_unused_properties__ = [*Metric.__jit_unused_properties__, "full_state_update"]

    # the wrapped metric decides which dtypes it reads (base/input_guard.py refuses meta here)
    refused_input_dtypes: FrozenSet[torch.dtype] = frozenset()

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._slots: Dict[str, Tuple[Engine, Dict[StateRef, str]]] = {}
        self._slot_of_state: Dict[str, Tuple[Engine, StateRef]] = {}

    def named_update(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        """update(*args) passes its arguments on: the wrapped metric's update names them."""
        engines = self._engines()
        params = list(inspect.signature(fn).parameters.values())[1:2]
        if params and params[0].kind == params[0].VAR_POSITIONAL and engines and engines[0].members:
            member = engines[0].members[0]
            return member.named_update(type(member).update)
        return fn

    # -- declaring ------------------------------------------------------------------------

    def add_slot(self, tag: str, wrapped: Wrapped, engine: Optional[Engine] = None) -> Engine:
        """Declare ``wrapped``'s states on this metric as slot ``tag`` (``engine``: run them through
        an existing Engine, for several slots of one wrapped metric)."""
        engine = engine or Engine(wrapped)
        if any(m.dist_sync_on_step for m in engine.members):
            # forward returns the wrapped metric's batch value, which that metric syncs (torchmetrics'
            # wrappers call its forward)
            self.dist_sync_on_step = True
        names: Dict[StateRef, str] = {}
        for ref, default, reduce in engine.declarations():
            name = f"{tag}_{ref[0]}_{ref[1]}"
            self.add_state(name, default, reduce=reduce)
            names[ref] = name
            self._slot_of_state[name] = (engine, ref)
        self._slots[tag] = (engine, names)
        return engine

    @property
    def full_state_update(self) -> Optional[bool]:  # type: ignore[override]
        """False (forward updates once, then combines the batch's states) when every wrapped
        metric's is False; None (forward updates twice) otherwise."""
        members = [m for engine, _ in self.__dict__.get("_slots", {}).values() for m in engine.members]
        return False if members and all(m.full_state_update is False for m in members) else None

    @property
    def described_options(self) -> Dict[str, str]:
        own = dict(Metric.described_options.fget(self))  # type: ignore[attr-defined]
        for tag, (engine, _) in self.__dict__.get("_slots", {}).items():
            own.update({f"{tag}.{name}": text for name, text in engine.options().items()})
        return own

    def accepted_update_kwargs(self, kwargs: Dict[str, Any]) -> Dict[str, Any]:
        """Of a collection's keyword arguments: those the wrapper's ``update`` names, and, where it
        passes its other keywords on (``**kwargs``), those its wrapped metrics take; so a wrapper
        in a MetricCollection is given what its wrapped metric understands, as torchmetrics
        filters them."""
        keywords = update_keywords(type(self)._unwrapped_update)
        if not keywords.takes_any:
            return super().accepted_update_kwargs(kwargs)
        passed: Dict[str, Any] = {}
        for engine in self._engines():
            target = engine.target
            passed.update(target.accepted_update_kwargs(kwargs) if isinstance(target, Metric) else kwargs)
        return {k: v for k, v in kwargs.items() if k in keywords.names or k in passed}

    def _engines(self) -> List[Engine]:
        return list({id(engine): engine for engine, _ in self.__dict__.get("_slots", {}).values()}.values())

    def wrapped_counts(self) -> List[List[int]]:
        """The wrapped metrics' ``update_count`` s, per Engine (``set_wrapped_counts`` puts them back)."""
        return [engine.counts() for engine in self._engines()]

    def set_wrapped_counts(self, counts: Optional[List[List[int]]] = None, added: int = 0) -> None:
        """The wrapped metrics' ``update_count`` s set to ``counts`` (None: zeros) plus ``added``."""
        engines = self._engines()
        for i, engine in enumerate(engines):
            base = counts[i] if counts is not None else [0] * len(engine.members)
            engine.set_counts([n + added for n in base])

    @torch.jit.unused
    def forward(self, *args: Any, **kwargs: Any) -> Any:
        """As Metric's; a wrapped metric counts it as one update (``update_count``), also where
        the wrapper updates twice; a refused batch leaves the counts as they were."""
        before = self.wrapped_counts()
        try:
            value = super().forward(*args, **kwargs)
        except BaseException:
            self.set_wrapped_counts(before)
            raise
        self.set_wrapped_counts(before, added=1)
        return value

    def hold_flags(self) -> Tuple[bool, int, Any]:
        """As Metric's, with the wrapped metrics' update counts: a collection whose later member
        refuses a batch puts them back too (``restore_flags``)."""
        updated, count, cache = super().hold_flags()
        return updated, count, (cache, self.wrapped_counts())

    def restore_flags(self, flags: Tuple[bool, int, Any]) -> None:
        updated, count, (cache, counts) = flags
        super().restore_flags((updated, count, cache))
        self.set_wrapped_counts(counts)

    def reset(self) -> "WrapperMetric":
        """As Metric's; the wrapped metrics' ``update_count`` s go back to 0 too."""
        super().reset()
        self.set_wrapped_counts()
        return self

    def merge_state_values(self, name: str, values: List[torch.Tensor]) -> torch.Tensor:
        engine, ref = self._slot_of_state[name]
        return engine.merge(ref, values)

    # -- running the wrapped metrics on a slot ---------------------------------------------

    def slot_values(self, tag: str, fresh: bool = False) -> Dict[StateRef, Any]:
        """Slot ``tag``'s states as its wrapped metric takes them (cat states as block lists);
        ``fresh``: the declared defaults instead."""
        _, names = self._slots[tag]
        if fresh:
            return {ref: self._fresh(name) for ref, name in names.items()}
        held = self.hold_states().values
        return {ref: held[name] for ref, name in names.items()}

    def _fresh(self, name: str) -> Any:
        return [] if self.state_reduce(name) == "cat" else self.state_default(name).clone()

    def update_slot(
        self, tag: str, call: Callable[[Wrapped], Any], fresh: bool = False, into: Optional[str] = None
    ) -> None:
        """``call(wrapped)`` (an update) on slot ``tag``'s states, the result kept in slot ``into``
        (default: the same slot). ``fresh``: start from the defaults (the slot is replaced)."""
        engine, names = self._slots[tag]
        held = self.hold_states()  # once: the run changes the wrapped metric's states, not these
        given = {  # a cat state's block list copied: the run appends to the list it is given
            ref: self._fresh(name) if fresh else _own_list(held.values[name]) for ref, name in names.items()
        }
        _, after = engine.run(given, self.device, call)
        _, target = self._slots[into or tag]
        values = dict(held.values)
        for ref, value in after.items():
            values[target[ref]] = value
        self.restore_states(HeldStates(values, held.updated, held.update_count, held.cache))

    def slot_value(self, tag: str, values: Optional[Dict[StateRef, Any]] = None) -> Any:
        """The wrapped metric's result on slot ``tag``'s states (or on ``values``): its
        ``compute_local``, no sync (the wrapper's own compute has synced every slot at once)."""
        engine, names = self._slots[tag]
        if values is None:  # this slot's states only (metric_state would read every slot's)
            values = {ref: getattr(self, name) for ref, name in names.items()}
        given = {ref: [v] if self.state_reduce(names[ref]) == "cat" else v for ref, v in values.items()}
        return engine.evaluate(given, self.device, lambda target: target.compute_local())

    def combined_slots(self, tags: List[str]) -> Dict[StateRef, Any]:
        """The states of slots ``tags`` (of one wrapped metric) combined by each state's reduce."""
        engine, first = self._slots[tags[0]]
        states = self.metric_state
        return {ref: engine.combine(ref, [states[self._slots[t][1][ref]] for t in tags]) for ref in first}

    def atomically(self, steps: Callable[[], None]) -> None:
        """Run ``steps`` (updates of several slots); if one raises, every slot is put back.
        Every wrapped metric is checked first, also those whose slot this batch skips."""
        for engine in self._engines():
            engine.refuse_direct_updates()
        saved, counts = self.checkpoint_states(), self.wrapped_counts()
        try:
            steps()
        except BaseException:
            self.rollback_states(saved)
            self.set_wrapped_counts(counts)
            raise
