"""A metric's declared state: ``add_state`` / ``append_state``, reading and assigning states as
attributes, and the interface through which MetricCollection, the sync and the engines hold,
restore, share and combine a metric's state without touching its private attributes.

A mixin of Metric. Where the state lives (in ``__dict__``, read and written raw):

  ``_specs``         name -> (reduce, default), in declaration order;
  ``<name>``         a fixed or merge state's tensor (assigned straight into ``__dict__``: the
                     fast path of every update);
  ``_cat_chunks``    cat state name -> list of row blocks, concatenated when read;
  ``<name>``         a list state's Python list (torchmetrics' ``default=[]``: base/lists.py),
                     its reduce LIST in ``_specs``, its ``dist_reduce_fx`` in ``_list_reduce``;
  ``_pending``       merge state name -> (value, blocks) kept for a later fold (base/pending.py);
  ``_updated``       holds data (an update, a load or a merge since the last reset);
  ``_update_count``, ``_cache`` (``(result,)`` once computed, until the next update).
"""

from typing import TYPE_CHECKING, Any, Callable, Dict, Iterable, List, NamedTuple, Optional, Tuple, Union

import torch
from torch import nn

from ..sync.plan import StateSpec, check_declarable
from . import lists
from .interop import missing_attribute_error
from .lists import LIST
from .pending import PendingStates

# Class attributes torchmetrics forbids changing on an instance.
_CONSTANTS = frozenset("higher_is_better is_differentiable full_state_update".split()) | frozenset(
    ("plot_lower_bound", "plot_upper_bound", "plot_legend_name")
)
# What ``checkpoint_states`` saved of each state: the object held, and what restores its contents.
Checkpoint = Dict[str, Tuple[Any, Any]]


class HeldStates(NamedTuple):
    """A metric's state objects and flags at one moment (references, no copies). A named tuple:
    a forward makes one at every step, at a third of a dataclass's cost."""

    values: Dict[str, Any]  # fixed/merge state -> tensor; cat state -> its list of row blocks
    updated: bool
    update_count: int
    cache: Any


def combine(reduce: str, values: List[torch.Tensor]) -> torch.Tensor:
    """Combine same-shaped fixed states (or cat states) the way a sync would."""
    if reduce == "cat":
        return torch.cat(values)
    out = values[0]
    for v in values[1:]:
        if reduce == "sum":
            out = out + v
        elif reduce == "max":
            out = torch.maximum(out, v)
        elif reduce == "min":
            out = torch.minimum(out, v)
        elif reduce == "prod":
            out = out * v
        else:
            raise ValueError(f"combine: unknown reduce {reduce!r}")
    return out.clone() if len(values) == 1 else out


class States(PendingStates):
    """Mixin of Metric: its declared states and the interface to them (module docstring)."""

    # True where compute returns tensors of its own, never a state or a view of one (every
    # torchtally count metric's): a forward then counts each batch in the buffers of the one
    # before instead of fresh ones, as no batch value it returned shares them.
    fresh_compute_results: bool = False

    if TYPE_CHECKING:  # Metric's, set in its __init__ (base/metric.py) and by its other mixins
        _specs: Dict[str, Tuple[str, torch.Tensor]]
        _cat_chunks: Dict[str, List[torch.Tensor]]
        _list_reduce: Dict[str, lists.Reduction]
        _persistent: Dict[str, bool]
        device: torch.device

        def place_states(self, device: torch.device, states: bool) -> None: ...
        def _option_assigned(self, name: str) -> None: ...

    def add_state(
        self,
        name: str,
        default: Union[torch.Tensor, List[Any]],
        reduce: Any = None,
        persistent: bool = False,
        *,
        dist_reduce_fx: Any = None,
    ) -> None:
        """Declare a state. ``default`` fixes its dtype and shape (for cat/merge: the shape of a
        row, i.e. the dims after 0) and is what ``reset`` restores. A cat default must have 0
        rows. ``reduce`` (torchmetrics' name: ``dist_reduce_fx``) is one of sum (the default),
        max, min, prod, cat, merge (torchtally.utilities' dim_zero_sum/max/min/cat name the same).
        ``persistent``: whether ``state_dict()`` includes it.

        ``default=[]`` declares a list state, as in torchmetrics: a Python list that ``update``
        appends tensors to; ``dist_reduce_fx`` "cat", None (the default for a list), "sum",
        "mean", "max", "min" or a function says what a sync gives ``compute`` (base/lists.py)."""
        if "_specs" not in self.__dict__:
            raise RuntimeError(f"{type(self).__name__}.__init__ must call super().__init__() before add_state")
        if reduce is not None and dist_reduce_fx is not None and reduce != dist_reduce_fx:
            raise ValueError(f"add_state('{name}'): give reduce or dist_reduce_fx, not both")
        if not isinstance(name, str) or not name.isidentifier():
            raise ValueError(f"add_state: name must be a Python identifier, got {name!r}")
        if name in self._specs:
            raise ValueError(f"add_state: state '{name}' is already declared")
        if hasattr(type(self), name) or name in self.__dict__:
            raise ValueError(f"add_state: name '{name}' clashes with an attribute of {type(self).__name__}")
        if isinstance(default, list):
            if default:
                raise ValueError("state variable must be a tensor or any empty list (where you can append tensors)")
            self._list_reduce[name] = lists.list_reduction(name, dist_reduce_fx if reduce is None else reduce)
            self._declared(name, LIST, torch.empty(0, dtype=torch.int64, device=self.device), persistent)
            self.__dict__[name] = []
            return
        reduce = lists.tensor_reduction(reduce or dist_reduce_fx or "sum")
        if not isinstance(default, torch.Tensor):
            raise TypeError(f"add_state('{name}'): default must be a torch.Tensor, got {type(default).__name__}")
        check_declarable(name, default.dtype, reduce)
        if reduce in ("cat", "merge") and default.dim() == 0:
            raise ValueError(f"add_state('{name}'): a '{reduce}' state needs at least one dim (dim 0 holds rows)")
        if reduce == "cat" and default.shape[0] != 0:
            raise ValueError(
                f"add_state('{name}'): a 'cat' default must have 0 rows (e.g. torch.empty(0, ...)), "
                f"got shape {tuple(default.shape)}"
            )
        default = default.detach().to(self.device).clone()
        self._declared(name, reduce, default, persistent)
        if reduce == "cat":
            self._cat_chunks[name] = []
        else:
            self.__dict__[name] = default.clone()

    def _declared(self, name: str, reduce: str, default: torch.Tensor, persistent: bool) -> None:
        self._specs[name] = (reduce, default)
        self._persistent[name] = bool(persistent)
        self.__dict__["_spec_version"] += 1
        self.__dict__["_plan"] = None

    def append_state(self, name: str, rows: torch.Tensor, *, copy: Optional[bool] = None) -> None:
        """Append ``rows`` (dim 0 = rows, the rest = the declared row shape) to cat state ``name``.

        Blocks are kept in a list and concatenated when ``self.<name>`` is read, so appending is
        O(1). A stored block never shares memory with a tensor the caller still holds (a caller
        that refills one buffer for every batch would otherwise see every stored batch change):

        * ``copy=None`` (the default): ``rows`` is copied when it shares memory with a tensor
          argument of the ``update`` that is running (a tensor passed directly, or an item of a
          list, tuple or dict passed), or, outside an update, always (``rows`` is then the
          caller's own tensor). A block the update computed itself (a cast, an arithmetic
          result) is stored as it is;
        * ``copy=False``: stored as it is; for a caller that has just made ``rows`` itself and
          keeps no other reference to it (torchtally's own metrics, whose rows are fresh);
        * ``copy=True``: always copied.

        A block on another device than the state is moved (which copies it).
        """
        if name not in self._cat_chunks:
            raise ValueError(f"append_state: '{name}' is not a 'cat' state of {type(self).__name__}")
        rows = self._check_rows(name, rows, "append_state")
        if copy or (copy is None and self._may_alias_input(rows)):
            rows = rows.clone(memory_format=torch.contiguous_format)
        self._cat_chunks[name].append(rows)

    def copied_rows(self, name: str) -> torch.Tensor:
        """A new tensor holding cat state ``name``'s rows, which share no memory with it (one
        copy; the state's blocks stay as they are)."""
        parts = self._cat_chunks[name]
        return torch.cat(parts) if parts else self._specs[name][1].clone()

    def _may_alias_input(self, rows: torch.Tensor) -> bool:
        """Whether ``rows`` shares memory with a tensor argument of the running update (always
        True outside an update, where ``rows`` is the caller's own tensor)."""
        inputs = self.__dict__.get("_update_inputs")
        if inputs is None:
            return True
        args, kwargs = inputs
        try:
            storage = rows.untyped_storage().data_ptr()
            for value in (*args, *kwargs.values()):
                candidates: Iterable[Any]
                if isinstance(value, dict):
                    candidates = value.values()
                elif isinstance(value, (list, tuple)):
                    candidates = value
                else:
                    candidates = (value,)
                for t in candidates:
                    if isinstance(t, torch.Tensor) and t.untyped_storage().data_ptr() == storage:
                        return True
        except (RuntimeError, NotImplementedError):  # a layout without a storage (sparse, ...): copy
            return True
        return False

    def _check_rows(self, name: str, rows: Any, where: str) -> torch.Tensor:
        default = self._specs[name][1]
        if not isinstance(rows, torch.Tensor):
            raise TypeError(f"{where}('{name}'): expected a tensor, got {type(rows).__name__}")
        if rows.dtype != default.dtype:
            raise TypeError(f"{where}('{name}'): expected dtype {default.dtype}, got {rows.dtype}")
        if rows.dim() != default.dim() or (rows.dim() > 1 and rows.shape[1:] != default.shape[1:]):
            want = ("N",) + tuple(default.shape[1:])
            raise ValueError(f"{where}('{name}'): expected shape {want}, got {tuple(rows.shape)}")
        device = self.device
        if rows.device != device:
            if rows.is_meta and device.type != "meta":
                raise ValueError(f"{where}('{name}'): expected a tensor holding values, got a meta tensor")
            rows = rows.to(device)
        # detached only where it would change something: appends are the per-batch path
        return rows.detach() if rows.requires_grad else rows

    def __getattr__(self, name: str) -> Any:
        # Only reached when normal lookup fails: cat states live outside __dict__, submodules
        # in nn.Module's registry.
        pending = self.__dict__.get("_pending")
        if pending and name in pending:  # a merge state with blocks kept for a later fold (base/pending.py)
            with self.__dict__["_lock"]:  # an update in another thread may be adding a block
                self.settle_states()
                return self.__dict__[name]
        chunks = self.__dict__.get("_cat_chunks")
        if chunks is not None and name in chunks:
            parts = chunks[name]
            if len(parts) != 1:
                whole = torch.cat(parts) if parts else self._specs[name][1].clone()
                parts[:] = [whole]
            return parts[0]
        try:
            return nn.Module.__getattr__(self, name)  # type: ignore[arg-type]  # self: Metric, an nn.Module
        except AttributeError as error:
            raise missing_attribute_error(self, name, error) from None

    def __setattr__(self, name: str, value: Any) -> None:
        d = self.__dict__
        specs = d.get("_specs")
        if specs is not None and name in specs:
            if name in d["_cat_chunks"]:
                d["_cat_chunks"][name] = [self._check_rows(name, value, "assigning")]
            else:
                d[name] = value  # a fixed state: the fast path of every update
                d.get("_pending", {}).pop(name, None)  # blocks kept for the state it replaces (base/pending.py)
        elif name in _CONSTANTS:
            raise RuntimeError(f"Can't change const `{name}`.")
        else:
            nn.Module.__setattr__(self, name, value)  # type: ignore[arg-type]  # self: Metric, an nn.Module
            if d.get("_options") is not None:
                self._option_assigned(name)

    @property
    def state_names(self) -> Tuple[str, ...]:
        return tuple(self._specs)

    def state_reduce(self, name: str) -> str:
        return self._specs[name][0]

    def state_default(self, name: str) -> torch.Tensor:
        """The declared default of state ``name`` (what ``reset`` restores; do not modify it)."""
        return self._specs[name][1]

    @property
    def metric_state(self) -> Dict[str, torch.Tensor]:
        """The current states by name (the tensors themselves, cat states concatenated)."""
        return {name: getattr(self, name) for name in self._specs}

    @property
    def dtype(self) -> torch.dtype:
        """The dtype of this metric's floating-point results (torch's default dtype when the
        metric was made; ``set_dtype`` changes it). Accumulators keep their own exact dtypes."""
        return self.__dict__["_dtype"]

    @property
    def update_count(self) -> int:
        """How many times ``update`` (or ``forward``) ran since construction or the last reset."""
        d = self.__dict__
        return d["_update_count"] + int(d["_traced_updates"])  # the latter: updates inside torch.compile

    @property
    def update_called(self) -> bool:
        return self.update_count > 0

    def state_values(self) -> List[torch.Tensor]:
        return [getattr(self, name) for name in self._specs]

    def _tensor_states(self) -> List[torch.Tensor]:
        """The states kept as one tensor (not the "cat" chunk lists): what the kernels update."""
        self.settle_states()
        return [self.__dict__[n] for n, (reduce, _) in self._specs.items() if reduce not in ("cat", LIST)]

    def _set_states(self, states: Dict[str, torch.Tensor]) -> None:
        self.drop_pending(states)
        for name, value in states.items():
            if name in self._cat_chunks:
                self._cat_chunks[name] = [value]
            else:
                self.__dict__[name] = value

    def hold_states(self) -> HeldStates:
        """References to the current state objects (no copies): reset() replaces them with new
        objects, so holding them is enough to put them back or to combine with them."""
        self.settle_states()
        d = self.__dict__
        return HeldStates(
            {n: (list(self._cat_chunks[n]) if n in self._cat_chunks else d[n]) for n in self._specs},
            d["_updated"],
            d["_update_count"],
            d["_cache"],
        )

    def restore_states(self, held: HeldStates) -> None:
        self.drop_pending()  # kept after ``held`` was taken (which settled them)
        d = self.__dict__
        for name, value in held.values.items():
            if name in self._cat_chunks:
                self._cat_chunks[name] = value
            else:
                d[name] = value
        d["_updated"], d["_update_count"], d["_cache"] = held.updated, held.update_count, held.cache

    def merge_state_values(self, name: str, values: List[torch.Tensor]) -> torch.Tensor:
        """Combine the values of "merge" state ``name`` from several ranks or metric instances.

        ``values`` are in rank order (for ``merge_state``: self first, then the others); each
        has the declared row shape and possibly a different dim 0. Return the combined value.
        A metric that declares a "merge" state must override this, e.g. to merge (n, mean, M2)
        rows with Chan's formula.
        """
        raise NotImplementedError(
            f"{type(self).__name__} declares the 'merge' state '{name}' but does not implement "
            "merge_state_values(name, values)"
        )

    def combine_states(self, name: str, values: List[Any]) -> Any:
        reduce = self._specs[name][0]
        if reduce == LIST:  # as torchmetrics' forward and merge_state: the lists joined
            return [t for v in values for t in (v if isinstance(v, (list, tuple)) else [v])]
        return self.merge_state_values(name, values) if reduce == "merge" else combine(reduce, values)

    def states_kept_on_reset(self) -> Tuple[str, ...]:
        """Names of the states that ``reset()`` leaves as they are: none here. A metric whose
        option says to keep some data across epochs overrides this (FID with
        ``reset_real_features=False`` keeps its real-image sums). Only ``reset()`` reads it:
        ``hold_and_clear_states`` (a forward's batch value), ``load_state_dict`` and the sync
        treat these states as any other."""
        return ()

    def _reset_states(self) -> None:
        kept = self.states_kept_on_reset()
        self.drop_pending(n for n in self._specs if n not in kept)
        for name, (reduce, default) in self._specs.items():
            if name in kept:
                continue
            if reduce == "cat":
                self._cat_chunks[name] = []
            else:
                self.__dict__[name] = [] if reduce == LIST else default.clone()

    # -- the interface MetricCollection, the sync and the engines use ----------------------

    @property
    def has_data(self) -> bool:
        """Whether the state holds data: an update, a load or a merge since the last reset."""
        return self.__dict__["_updated"]

    @property
    def declaration_version(self) -> int:
        """Changes whenever a state is declared or an option assigned: a sync plan made for an
        earlier version is stale."""
        return self.__dict__["_spec_version"]

    @property
    def cached_result(self) -> Optional[Tuple[Any]]:
        """``(result,)`` from the last compute when no update came after it, else None."""
        return self.__dict__["_cache"]

    def keep_result(self, result: Any) -> None:
        """Cache ``result`` as this metric's value until the next update or reset."""
        self.__dict__["_cache"] = (result,)

    def drop_cached_result(self) -> None:
        self.__dict__["_cache"] = None

    def keep_batch_value(self, value: Any) -> None:
        """Keep ``value`` as the value of the last ``forward`` (torchmetrics' ``_forward_cache``,
        what Lightning logs with ``on_step=True``); None forgets it, as ``reset()`` does."""
        self.__dict__["_forward_cache"] = value

    def hold_and_clear_states(self) -> HeldStates:
        """``hold_states()``, then every state back to its default, holding no data (new objects,
        so the held ones can be put back); count and cache as they were. One pass over the
        states: a forward does this at every step."""
        self.settle_states()
        d = self.__dict__
        chunks = self._cat_chunks
        values: Dict[str, Any] = {}
        for name, (reduce, default) in self._specs.items():
            if reduce == "cat":
                values[name], chunks[name] = list(chunks[name]), []
            else:
                values[name], d[name] = d[name], [] if reduce == LIST else default.clone()
        held = HeldStates(values, d["_updated"], d["_update_count"], d["_cache"])
        d["_updated"] = False
        return held

    def hold_flags(self) -> Tuple[bool, int, Any]:
        """(holds data, update count, cache), for ``restore_flags``."""
        d = self.__dict__
        return d["_updated"], d["_update_count"], d["_cache"]

    def restore_flags(self, flags: Tuple[bool, int, Any]) -> None:
        d = self.__dict__
        d["_updated"], d["_update_count"], d["_cache"] = flags

    def checkpoint_states(self) -> Checkpoint:
        """What ``rollback_states`` needs to undo the next updates in place: a clone of each
        fixed and merge state, the length of each cat state's block list and list state (so an
        update must add cat rows with ``append_state`` or assign the state, and append to a list
        state or assign it, not rewrite what the list held)."""
        self.settle_states()
        saved: Checkpoint = {}
        chunks = self._cat_chunks
        for name, (reduce, _) in self._specs.items():
            if name in chunks:
                saved[name] = (chunks[name], len(chunks[name]))
            elif reduce == LIST:
                saved[name] = (self.__dict__[name], len(self.__dict__[name]))
            else:
                value = self.__dict__[name]
                saved[name] = (value, value.clone())
        return saved

    def rollback_states(self, saved: Checkpoint) -> None:
        """Put back the objects ``checkpoint_states`` saw, with their contents then (in place,
        so that every metric sharing them sees the restored value)."""
        self.drop_pending()  # kept after the checkpoint (which settled them)
        for name, (held, before) in saved.items():
            if name in self._cat_chunks:
                del held[before:]
                self._cat_chunks[name] = held
            elif isinstance(held, list):  # a list state
                del held[before:]
                self.__dict__[name] = held
            else:
                held.copy_(before)
                self.__dict__[name] = held

    def share_states_of(self, owner: "States", keep_cache: bool = False) -> None:
        """Hold ``owner``'s state objects (no copies: one state, two metrics), on its device;
        unless ``keep_cache``, also its flags, with no cached result of this metric's own."""
        owner.settle_states()
        self.drop_pending()  # this metric's states become owner's
        d, od = self.__dict__, owner.__dict__
        if d["device"] is not od["device"] and d["device"] != od["device"]:
            self.place_states(od["device"], states=False)
        for name in od["_specs"]:
            if name in od["_cat_chunks"]:
                d["_cat_chunks"][name] = od["_cat_chunks"][name]
            else:
                d[name] = od[name]
        if not keep_cache:
            d["_updated"], d["_update_count"], d["_cache"] = od["_updated"], od["_update_count"], None
            d["_traced_updates"] = od["_traced_updates"]

    def join_state_group(self, group: Optional[List[Any]], lock: Any) -> None:
        """Share ``lock``, and with ``group`` (a list of metrics holding the same state, this one
        among them) the state; None: this metric's state is its own."""
        self.__dict__["_lock"] = lock
        self.__dict__["_state_group"] = group

    def _share_my_state(self) -> None:
        """Point every other metric of this one's group at this one's state objects and flags,
        and drop their cached results (the state they were computed from has changed)."""
        group = self.__dict__.get("_state_group")
        if not group:
            return
        for other in group:
            if other is not self:
                other.share_states_of(self)

    def state_specs(self, label_prefix: str = "", unit: int = 0) -> List[StateSpec]:
        """The declared states as the sync plan describes them, labelled ``<prefix><class>.<name>``."""
        specs = []
        for name, (reduce, default) in self._specs.items():
            shape = tuple(default.shape[1:]) if reduce in ("cat", "merge") else tuple(default.shape)
            label = f"{label_prefix}{type(self).__name__}.{name}"
            if reduce == LIST:  # one blob of int64 words per rank (base/lists.py)
                label += f"[list, {lists.describe_reduction(self._list_reduce[name])}]"
                reduce, shape = "merge", ()
            specs.append(StateSpec(label, reduce, default.dtype, shape, unit))
        return specs

    def sync_values(self) -> Tuple[List[Any], Optional[Exception]]:
        """The values the sync plan (``state_specs``) carries, in its order: each state's value, a
        list state packed into its blob; and the error packing a list state raised, if any (that
        state then sends no items; the sync announces the error to every rank)."""
        values: List[Any] = []
        error = None
        for name, (reduce, _) in self._specs.items():
            if reduce != LIST:
                values.append(getattr(self, name))
                continue
            try:
                values.append(lists.pack(name, self.__dict__[name], self._list_reduce[name], self.device))
            except (TypeError, ValueError) as exc:
                error = error or exc
                values.append(lists.pack(name, [], None, self.device))
        return values, error

    def merge_synced_values(self, name: str, values: List[torch.Tensor]) -> Any:
        """The synced value of "merge" or list state ``name`` from every rank's (rank order)."""
        if self._specs[name][0] != LIST:
            return self.merge_state_values(name, values)
        items = [lists.unpack(blob) for blob in values]
        return lists.reduce_gathered(name, self._list_reduce[name], items, self.dtype, self.device)

    def gathered_state(self, name: str, gather: Callable[..., Any], group: Any) -> Any:
        """State ``name`` synced by a user's ``dist_sync_fn`` ``gather`` (torchmetrics' way)."""
        if self._specs[name][0] == LIST:
            return lists.gathered_with(gather, name, self.__dict__[name], self._list_reduce[name], group, self.dtype)
        return self.combine_states(name, list(gather(getattr(self, name), group=group)))

    def combined_with(self, held: HeldStates) -> Dict[str, Any]:
        """The states ``held`` (accumulated earlier) combined with the ones this metric holds now
        (one batch's), by each state's reduce. Nothing is assigned: a merge may refuse the pair."""
        self.settle_states()
        d = self.__dict__
        combined: Dict[str, Any] = {}
        for name, (reduce, _) in self._specs.items():
            if reduce == "cat":
                combined[name] = held.values[name] + self._cat_chunks[name]
            else:
                combined[name] = self.combine_states(name, [held.values[name], d[name]])
        return combined

    def assign_combined(self, combined: Dict[str, Any], held: HeldStates) -> None:
        """Take ``combined_with``'s states: the data ``held`` accumulated plus one more update."""
        self.drop_pending(combined)
        d = self.__dict__
        for name, value in combined.items():
            if name in self._cat_chunks:
                self._cat_chunks[name] = value
            else:
                d[name] = value
        d["_updated"], d["_update_count"], d["_cache"] = True, held.update_count + 1, None

    # -- forward of a metric whose states are all CPU "sum" states (the count family's) -------

    def summed_batch_states(self) -> Optional[Tuple[str, ...]]:
        """The state names when forward may count a batch apart in reused buffers and add it in
        place (every state a CPU "sum" state, and compute returns fresh tensors:
        ``fresh_compute_results``), else None. Kept per declaration version and device."""
        d = self.__dict__
        kept = d.get("_summed_batch_states")
        if kept is None or kept[0] != d["_spec_version"] or kept[1] is not d["device"]:
            specs = self._specs
            eligible = (
                self.fresh_compute_results
                and d["device"].type == "cpu"
                and all(reduce == "sum" for reduce, _ in specs.values())
            )
            kept = d["_summed_batch_states"] = (d["_spec_version"], d["device"], tuple(specs) if eligible else None)
        return kept[2]

    def swap_in_batch_buffers(self, names: Tuple[str, ...]) -> HeldStates:
        """``hold_and_clear_states`` for the states ``names`` (summed_batch_states), each put back
        to its default in the buffer the last forward counted in (a new one the first time)."""
        d = self.__dict__
        spares = d.get("_batch_buffers")
        if spares is None:
            spares = d["_batch_buffers"] = {}
        specs, values = d["_specs"], {}
        for name in names:
            default = specs[name][1]
            values[name] = d[name]
            spare = spares.get(name)
            d[name] = spare[1].copy_(default) if spare is not None and spare[0] is default else default.clone()
        held = HeldStates(values, d["_updated"], d["_update_count"], d["_cache"])
        d["_updated"] = False
        return held

    def add_batch_buffers(self, held: HeldStates) -> None:
        """Add each batch buffer into its accumulated state ``held``, in place, and put that back;
        the buffers are kept for the next forward."""
        d = self.__dict__
        spares, specs = d["_batch_buffers"], d["_specs"]
        for name, total in held.values.items():
            batch = d[name]
            d[name] = total.add_(batch)
            spares[name] = (specs[name][1], batch)
        d["_updated"], d["_update_count"], d["_cache"] = True, held.update_count + 1, None

    def fixed_state_bytes(self) -> int:
        """Bytes of the fixed-shape states (what a checkpoint clones)."""
        return sum(d.numel() * d.element_size() for reduce, d in self._specs.values() if reduce not in ("cat", LIST))
