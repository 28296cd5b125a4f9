"""Metric: an ``nn.Module`` with declared state, a cached compute, and sync across ranks.

A subclass declares its state once in ``__init__`` with ``add_state`` and implements
``update`` and ``compute`` on it; the base class does the rest (see the Metric docstring).

State kinds, by ``reduce`` (how ranks, ``forward`` and ``merge_state`` combine them):

  "sum" | "max" | "min" | "prod"   fixed-shape tensors, combined elementwise;
  "cat"                            a tensor whose dim 0 grows: rows are appended with
                                   ``append_state(name, rows)`` and read back as one tensor
                                   (``self.<name>``); ranks' rows are concatenated in rank order;
  "merge"                          a tensor combined by the metric's own
                                   ``merge_state_values(name, values)``, e.g. Chan's formula for
                                   moments. Its dim 0 may vary; the rest of its shape is fixed.
  "list" (``add_state(default=[])``)  torchmetrics' list state: a Python list that update appends
                                   to, synced as torchmetrics syncs it (base/lists.py).

The torchmetrics behaviours (``forward``, the base keyword arguments, ``state_dict`` with
``persistent``, ``set_dtype``, arithmetic composition) follow torchmetrics; the differences
are listed in the Metric docstring.

Where each part of Metric lives (in torchtally/base/; each mixin is named after its file):

  metric.py       Metric: construction, the update/compute wrappers, forward, reset, merge_state
  states.py       States: add_state / append_state, states read and assigned as attributes, and
                  the interface to them (hold, restore, share with a collection, combine, specs)
  synced.py       SyncedMetric: compute over every rank (the sync plan, synced states swapped in
                  for one compute, manual sync/unsync); what it shares with a collection: Synced
  options.py      Options: torchmetrics' keyword arguments, which attributes are options
  placement.py    Placement: devices, result dtype, rejected CUDA updates raised later
  state_dict.py   StateDict: state_dict / load_state_dict, every entry checked before any is set
  guard.py        Guard: the lock, copies and pickles (process group, lock); results copied
  composition.py  Composition: arithmetic on metrics
  attachable.py   Attachable: ignite's attach / detach / is_attached
  plotting.py     Plotting: plot() and torchmetrics' _plot(), and their drawing
  lists.py        list states (torchmetrics' ``default=[]``): packed, synced and combined
"""

import copy
import functools
import sys
from typing import Any, Callable, Dict, FrozenSet, Hashable, Iterable, List, Optional, Tuple, Union

import torch
from torch import nn

from ..kernels.ops import OutsideTheGraph, compiling
from ..sync import dist
from ..utilities.data import squeeze_if_scalar
from .attachable import Attachable
from .composition import Composition
from .guard import Guard, caller_copy, locked, locked_sharing, new_lock
from .input_guard import UNREADABLE_DTYPES, check_readable, module_guard
from .interop import declare_metric_class, missing_attribute_error, register_with_torchmetrics
from .lists import moved
from .options import Options, TorchmetricsOptions, checked_recipient_rank
from .placement import Placement, canonical_device, first_tensor
from .plotting import Plotting
from .state_dict import StateDict
from .states import States
from .synced import SUBCLASS_COMPUTE, SyncedMetric
from .update_kwargs import kwargs_filter

_WRAPPED = "_torchtally_wrapped"


class Metric(Composition, Attachable, Guard, Options, States, SyncedMetric, Placement, StateDict, Plotting, nn.Module):
    """Base class of torchtally metrics: a ``torch.nn.Module`` with torchmetrics' interface.

    Subclasses declare state with ``add_state`` and write plain ``update`` / ``compute``
    methods that read and assign ``self.<state>``. The base class wraps them so that:

    * ``update(...)`` returns ``self``, drops the cached result and counts the update
      (``update_count``, ``update_called``);
    * ``metric(batch...)`` (``forward``) returns the metric over that batch alone and adds the
      batch to the accumulated state, from a single update: the batch's states are combined
      into the accumulated ones by their declared reduce (``full_state_update = True`` or None:
      two updates instead, as torchmetrics);
    * ``compute()`` returns the global result when torch.distributed is initialised with more
      than one rank (and ``sync_on_compute``), and caches it until the next ``update`` or
      ``reset`` (unless ``compute_with_cache=False``). Before any update (on any rank) it warns
      and computes over the empty state, as torchmetrics does;
    * sync never changes local state: ``compute`` runs on synced copies swapped in for the
      duration of the call (restored even if it raises), so updating after ``compute`` keeps
      accumulating this rank's data only.

    In a distributed run ``compute()`` is a collective: every rank of the process group must
    call it, also ranks that saw no data. When no rank has updated since the last compute, the
    cached result is returned after one small header exchange (no data moves).

    Keyword options: torchmetrics' (``compute_on_cpu``, ``dist_sync_on_step``,
    ``process_group``, ``dist_sync_fn``, ``distributed_available_fn``, ``sync_on_compute``,
    ``compute_with_cache``; see torchtally.base.options) and torchtally's:
    ``sync_timeout`` (seconds or timedelta, default 300 s; after it the sync raises SyncError
    naming the ranks that did not answer), ``recipient_rank`` (None: result on every rank; a
    rank of the group: only that rank gets the result, the others get None), and ``device``:
    where the states start (default CPU).

    Device: the state follows the input. While the metric holds no data (freshly made, or
    after ``reset()``), an ``update`` whose first tensor argument (positional or keyword;
    non-tensors are skipped) is on another device first moves the states, their defaults and
    any cat rows there, so ``Metric()`` needs no ``device=`` and no ``.to()`` for CUDA inputs.
    Once the metric holds data (an accepted update, ``load_state_dict``, a ``merge_state``
    with data), an input on another device raises ValueError naming the argument and both
    devices, with the state unchanged; ``reset()`` or an explicit ``.to(device)`` (allowed at
    any time, also through a parent module's ``.to()``) lets it move.

    Differences from torchmetrics, on purpose:

    * accumulators keep exact dtypes (int64 counts, float64 sums and moments); ``set_dtype``
      (and ``.to(dtype)``) set the dtype of the floating-point results (``self.dtype``), not of
      the accumulators. ``.float()`` / ``.double()`` / ``.half()`` leave a metric unchanged, as
      in torchmetrics;
    * results carry no gradient (the kernels are not differentiable): ``is_differentiable`` is
      False for every metric;
    * ``==`` and ``!=`` compare identity instead of building a composition;
    * ``merge_state`` also takes a list of metrics (torcheval's form).

    Example:

        >>> import torch
        >>> from torchtally import Metric
        >>> class Mean(Metric):
        ...     def __init__(self, **kwargs):
        ...         super().__init__(**kwargs)
        ...         self.add_state("total", torch.tensor(0.0, dtype=torch.float64), reduce="sum")
        ...         self.add_state("count", torch.tensor(0), reduce="sum")
        ...     def update(self, x):
        ...         self.total = self.total + x.sum(dtype=torch.float64)
        ...         self.count = self.count + x.numel()
        ...     def compute(self):
        ...         return self.total / self.count
        >>> m = Mean()
        >>> m(torch.tensor([1.0, 2.0]))  # forward: this batch's value, and accumulate it
        tensor(1.5000, dtype=torch.float64)
        >>> m.update(torch.tensor([6.0])).compute()
        tensor(3., dtype=torch.float64)
        >>> m = Mean().update(torch.ones(2, device="meta"))  # a fresh metric follows its input
        >>> m.total.device
        device(type='meta')
        >>> m.update(torch.ones(2))  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ValueError: x: expected a tensor on meta, where this metric's state is (it holds data ...), got one on cpu; ...

    ``state_key``: metrics with equal, non-None ``state_key`` inside one MetricCollection share
    their state (one update per batch, one slot in the sync). Set it (in ``__init__`` or on the
    class) to a hashable that fixes the state completely, e.g. ("multiclass_confmat", C, ignore_index).

    The interface MetricCollection, the sync and the engine hooks use (nothing outside Metric's
    own modules touches its private attributes): ``has_data``; ``hold_states`` /
    ``restore_states`` (references), ``checkpoint_states`` / ``rollback_states`` (in place),
    ``hold_and_clear_states``, ``hold_flags`` / ``restore_flags``; ``share_states_of`` (shared state);
    ``combined_with`` / ``assign_combined`` (forward); ``cached_result``, ``keep_result``,
    ``drop_cached_result``, ``keep_batch_value``; ``compute_on``, ``state_specs``, ``declaration_version`` (sync);
    ``place_states``, ``placement``, ``restore_placement``, ``raise_rejected_batch``,
    ``forget_rejected_cuda_updates`` (devices, CUDA rejections). See base/states.py,
    base/synced.py and base/placement.py.

    Options (``described_options``, torchtally.sync.fingerprint) differing across ranks raise
    SyncError, in ``merge_state`` / ``load_state_dict`` ValueError. One metric may be used from
    several threads; ``compute()`` returns copies (torchtally.base.guard).
    """

    # torch.jit.script(metric) works as for torchmetrics' metrics (forward is not scripted):
    # these are left out of the scripted module.
    __jit_ignored_attributes__ = ["device", "state_key", "_plot_curve_axes"]
    __jit_unused_properties__ = [
        "is_differentiable",
        "higher_is_better",
        "plot_lower_bound",
        "plot_upper_bound",
        "plot_legend_name",
        "metric_state",
        "state_names",
        "dtype",
        "update_count",
        "update_called",
        "described_options",
        "has_data",
        "declaration_version",
        "cached_result",
    ]
    state_key: Optional[Hashable] = None
    # torchmetrics' class attributes (each metric class sets its own values).
    is_differentiable: Optional[bool] = None
    higher_is_better: Optional[bool] = None
    full_state_update: Optional[bool] = None
    plot_lower_bound: Optional[float] = None
    plot_upper_bound: Optional[float] = None
    plot_legend_name: Optional[str] = None
    _plot_curve_axes: Optional[Tuple[int, int, str, str]] = None  # curves: which outputs plot() draws
    _reset_on_pickle = {**Guard._reset_on_pickle, "_computing": False, "_updating": False}
    # a copy stands alone (a copied collection links its own), and counts its batches in its own buffers
    _reset_on_copy = {"_state_group": None, "_batch_buffers": None}
    option_names: Optional[Tuple[str, ...]] = None  # None: every public attribute holding a plain value
    # Whether a result's one-element tensors come back 0-dim, as torchmetrics' compute makes them
    # (``squeeze_if_scalar``; also forward's batch value). None: for a compute written outside
    # torchtally (a user's subclass, as torchmetrics does to every metric); torchtally's own
    # metrics already give torchmetrics' shapes. False: never.
    squeeze_results: Optional[bool] = None
    # Whether dynamo can trace ``update`` into a graph (torch.compile): False where the update
    # branches on the data in Python (a NaN policy, a probabilities-or-logits decision); such an
    # update inside a compiled function runs eagerly, at a graph break.
    traceable_update: bool = True
    # True where compute costs about the copy a cached result needs (a concatenation) and returns
    # tensors no state shares: compute() on one process then keeps no result and copies none.
    results_recomputed: bool = False

    def __init__(
        self,
        *,
        sync_on_compute: bool = True,
        process_group: Optional[Any] = None,
        sync_timeout: Optional[dist.TimeoutLike] = None,
        recipient_rank: Optional[int] = None,
        device: Optional[torch.device] = None,
        **torchmetrics_options: Any,
    ) -> None:
        nn.Module.__init__(self)
        register_with_torchmetrics()  # Lightning's self.log(name, metric) checks for a torchmetrics.Metric
        if not isinstance(sync_on_compute, bool):
            raise ValueError(f"Expected keyword argument `sync_on_compute` to be a `bool` but got {sync_on_compute!r}")
        options = TorchmetricsOptions.from_kwargs(torchmetrics_options)
        d = self.__dict__
        d["_specs"] = {}  # name -> (reduce, default tensor), in declaration order
        d["_cat_chunks"] = {}  # cat state name -> list of row blocks (read back concatenated)
        d["_pending"] = {}  # merge state name -> (value, blocks kept for a later fold): base/pending.py
        d["_list_reduce"] = {}  # list state name -> its dist_reduce_fx (base/lists.py)
        d["_persistent"] = {}  # name -> whether state_dict() includes it
        d["_spec_version"] = 0
        d["_plan"] = None
        d["_updated"] = False  # holds data: an update, a load or a merge since the last reset
        d["_update_count"] = 0
        d["_traced_updates"] = torch.zeros((), dtype=torch.int64)  # updates inside torch.compile (_update_traced)
        d["_cache"] = None  # (result,) once computed
        d["_computing"] = False
        d["_updating"] = False
        d["_if_never_updated"] = "warn"  # compute() with no update anywhere: "warn" or "raise"
        d["_local_while_synced"] = None  # this rank's states while sync() has swapped synced ones in
        d["_dtype"] = torch.get_default_dtype()  # the dtype of float results (see set_dtype)
        d["_forward_cache"] = None
        d["_options"] = None  # described on first use (torchtally.sync.fingerprint)
        d["_lock"], d["_state_group"] = new_lock(), None  # see torchtally.base.guard
        self.sync_on_compute = sync_on_compute
        self.process_group = process_group
        self.sync_timeout = dist.timeout_seconds(sync_timeout)
        self.recipient_rank = checked_recipient_rank(recipient_rank)
        d["device"] = canonical_device(device) if device is not None else torch.device("cpu")
        self.compute_on_cpu = options.compute_on_cpu
        self.dist_sync_on_step = options.dist_sync_on_step
        self.dist_sync_fn = options.dist_sync_fn
        self.distributed_available_fn = options.distributed_available_fn
        self.compute_with_cache = options.compute_with_cache

    # -- the subclass's update/compute, wrapped -----------------------------------------

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        for attr, wrap in (("update", _wrap_update), ("compute", _wrap_compute)):
            fn = cls.__dict__.get(attr)
            if fn is not None and callable(fn) and not getattr(fn, _WRAPPED, False):
                if attr == "compute" and cls.squeeze_results is not False and not _own_class(cls):
                    fn = _squeezing(fn)
                setattr(cls, attr, wrap(fn))
        if "_guards_inputs" not in cls.__dict__ and module_guard(cls) is not None:
            cls._guards_inputs = bool(module_guard(cls))
        update = cls.__dict__.get("update")
        if update is not None:
            cls._update_kwargs_filter = staticmethod(kwargs_filter(update))
            cls._unwrapped_update = staticmethod(getattr(cls.update, "__wrapped__", update))

    _update_kwargs_filter: Callable[[Dict[str, Any]], Dict[str, Any]] = staticmethod(lambda kwargs: kwargs)
    _guards_inputs = False  # set per class at its creation (base/input_guard.py)
    refused_input_dtypes: FrozenSet[torch.dtype] = UNREADABLE_DTYPES

    _unwrapped_update: Callable[..., Any]  # the subclass's own update (what the wrapper runs)

    def accepted_update_kwargs(self, kwargs: Dict[str, Any]) -> Dict[str, Any]:
        """The keyword arguments ``update`` takes (all of them when it takes ``**kwargs``):
        what a MetricCollection passes to this metric of the keyword arguments it received."""
        return type(self)._update_kwargs_filter(kwargs)

    def _filter_kwargs(self, **kwargs: Any) -> Dict[str, Any]:
        """torchmetrics' name of ``accepted_update_kwargs``, which code written for it calls (a
        ClasswiseWrapper subclass filtering through its metric). torchmetrics' own MetricCollection
        calls it on each member just before that member's update, and fails on a later private
        read: there it raises that error at once, so that no member counts the batch."""
        if sys._getframe(1).f_globals.get("__name__") == "torchmetrics.collections":
            raise missing_attribute_error(self, "_filter_kwargs", AttributeError("_filter_kwargs"))
        return self.accepted_update_kwargs(kwargs)

    # Any: a subclass's update returns None as written; the wrapper Metric puts around it returns self.
    def update(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(f"{type(self).__name__} must implement update()")

    def compute(self) -> Any:
        raise NotImplementedError(f"{type(self).__name__} must implement compute()")

    def _run_update(self, fn: Callable[..., Any], args: tuple, kwargs: dict) -> "Metric":
        self._call_update(fn, args, kwargs)
        d = self.__dict__
        d["_updated"] = True
        d["_update_count"] += 1
        if self.compute_on_cpu:
            self.move_cat_states_to_cpu()
        if d["_state_group"] is not None:
            self._share_my_state()
        return self

    def _call_update(self, fn: Callable[..., Any], args: tuple, kwargs: dict) -> None:
        """The subclass's update ``fn`` inside the update protocol: options settled before it adds
        any attribute, the cached result dropped, a nested ``super().update()`` not counted again,
        the caller's tensors known to append_state. The count and the flags are the caller's."""
        d = self.__dict__
        if d.get("_options") is None:  # settle which attributes are options before an update adds any
            _ = self.described_options  # the property records them
        d["_cache"] = None
        d["_updating"] = True
        d["_update_inputs"] = (args, kwargs)  # the caller's tensors: append_state must not keep them
        try:
            if self.defers_checks():  # value checks kept on the device
                self.update_deferring(fn, args, kwargs)
            else:
                fn(self, *args, **kwargs)
        finally:
            d["_updating"], d["_update_inputs"] = False, None

    def _update_traced(self, fn: Callable[..., Any], args: tuple, kwargs: dict) -> "Metric":
        """The update as dynamo traces it (inside ``torch.compile``): the kernels are custom ops
        (torchtally.kernels.ops), and what cannot be a graph node is left out. No lock (a
        compiled step runs in one thread; the lock is Python state dynamo cannot trace), no
        device following (the states must already be on the input's device), and the count
        goes to a tensor: a Python int read here would be a constant dynamo guards on, and so a
        recompile at every step."""
        d = self.__dict__
        if d["_updating"]:
            fn(self, *args, **kwargs)
            return self
        x = first_tensor(args, kwargs)
        if x is not None and x.device != d["device"]:
            raise ValueError(
                f"{type(self).__name__}.update inside torch.compile: the input is on {x.device} and the state on "
                f"{d['device']}; a compiled step cannot move the state: call .to({str(x.device)!r}) on the metric "
                "(or update it once eagerly) before compiling"
            )
        fn(self, *args, **kwargs)
        d["_cache"] = None
        d["_updated"] = True
        d["_traced_updates"].add_(1)
        if d["_state_group"] is not None:
            self._share_my_state()
        return self

    @locked
    def compute_local(self) -> Any:
        """compute() on this rank's state only: no sync, no cache."""
        self.raise_rejected_cuda_updates()
        if not self._updated:
            self._never_updated(local=True)
        return caller_copy(self.compute_on(None))

    # -- forward: the batch's value, and the batch accumulated -------------------------

    @torch.jit.unused
    @locked_sharing
    def forward(self, *args: Any, **kwargs: Any) -> Any:
        """The metric over this batch alone (synced over ranks with ``dist_sync_on_step``), with
        the batch also added to the accumulated state. Every rank must call it when it syncs."""
        d = self.__dict__
        if d["_local_while_synced"] is not None:
            raise RuntimeError("The Metric shouldn't be synced when performing ``forward``. HINT: call ``unsync()``")
        if self._guards_inputs:
            check_readable(self, type(self).update, args, kwargs)
        x = args[0] if args else None
        if not isinstance(x, torch.Tensor):  # as update's wrapper: the common case without a call
            x = first_tensor(args, kwargs)
        if x is not None and x.device != d["device"]:
            if self._updated:
                raise self.device_mismatch(type(self).update, args, kwargs, x)
            self.place_states(x.device, states=True)
        if self.full_state_update is False:
            summed = self.summed_batch_states()
            value = self._forward_summing(summed, args, kwargs) if summed else self._forward_combining(args, kwargs)
        else:
            value = self._forward_twice(args, kwargs)
        self.__dict__["_forward_cache"] = value
        return value

    def _forward_summing(self, names: Tuple[str, ...], args: tuple, kwargs: dict) -> Any:
        """_forward_combining for CPU "sum" states (summed_batch_states): the batch counted in
        the buffers of the last forward, its value from them, then added in place."""
        held = self.swap_in_batch_buffers(names)
        try:
            # forward has followed the device; add_batch_buffers counts the update, these states are
            # no cat states (nothing for compute_on_cpu to move), and locked_sharing shares them
            self._call_update(type(self)._unwrapped_update, args, kwargs)
            self.__dict__["_updated"] = True  # the batch's states hold data (a per-step sync says so)
            self.raise_rejected_batch(held)
            value = self._batch_value()
        except BaseException:
            self.forget_rejected_cuda_updates()
            self.restore_states(held)
            raise
        self.add_batch_buffers(held)
        return value

    def _forward_combining(self, args: tuple, kwargs: dict) -> Any:
        """One update on fresh states, the batch value from them, then the accumulated states
        combined with the batch's by each state's reduce."""
        held = self.hold_and_clear_states()
        try:
            self._run_update(type(self)._unwrapped_update, args, kwargs)  # forward has followed the device
            self.raise_rejected_batch(held)
            value = self._batch_value()
            combined = self.combined_with(held)  # a merge may refuse the pair (R2Score's outputs)
        except BaseException:
            self.forget_rejected_cuda_updates()  # the batch's states die here, their rejections with them
            self.restore_states(held)
            raise
        self.assign_combined(combined, held)
        return value

    def _forward_twice(self, args: tuple, kwargs: dict) -> Any:
        """For a metric whose update reads its accumulated state: update it, then compute the
        batch value from a second update on fresh states."""
        self.update(*args, **kwargs)
        held = self.hold_and_clear_states()
        try:
            self.update(*args, **kwargs)
            self.raise_rejected_batch(held)
            return self._batch_value()
        finally:
            self.forget_rejected_cuda_updates()  # the second update's states die here
            self.restore_states(held)
            self.__dict__["_cache"] = None

    def value_request(self) -> Optional[Tuple[Callable[..., Any], Any]]:
        """None, or ``(finisher, request)``: this metric's value is ``finisher(metric, states,
        requests)[i]`` for its request, where ``metric`` is any metric holding the same state
        (``states``: the states to use, None for the metric's own), so that a collection forms
        the values of every metric sharing one state in one call. Metric: None (compute alone)."""
        return None

    def _batch_value(self) -> Any:
        if self.dist_sync_on_step and self._should_sync():
            return self._compute_synced(None)
        return self.compute_on(None)

    # -- lifecycle ----------------------------------------------------------------------

    @locked_sharing
    def reset(self) -> "Metric":
        """Restore every state to its declared default (except ``states_kept_on_reset()``,
        none unless the metric says so) and forget the cached result."""
        self.forget_rejected_cuda_updates()
        self._reset_states()
        d = self.__dict__
        d["_updated"] = False
        d["_update_count"] = 0
        d["_traced_updates"].zero_()
        d["_cache"] = None
        d["_forward_cache"] = None
        d["_local_while_synced"] = None
        return self

    @locked_sharing
    def merge_state(self, incoming_state: Union["Metric", Dict[str, torch.Tensor], Iterable["Metric"]]) -> "Metric":
        """Fold other states into this metric, by each state's reduce, as if this metric had
        seen their data too: another metric of the same states, a dict ``{state: tensor}``
        (torchmetrics' forms) or a list of metrics (torcheval's). The others are unchanged.
        Metrics must have the same options (``described_options``; ValueError naming each one
        that differs); a dict carries none, so it is not checked. A list state's incoming items
        come before this metric's own, as in torchmetrics."""

        def ordered(name: str, incoming: List[Any]) -> List[Any]:  # torchmetrics: a list's incoming items first
            return incoming + [getattr(self, name)] if name in self._list_reduce else [getattr(self, name)] + incoming

        if isinstance(incoming_state, dict):
            checked = self.check_state_dict(incoming_state, strict=True, where="merge_state")
            merged = {n: self.combine_states(n, ordered(n, [checked[n]])) for n in self._specs}
            incoming_updated = True
        else:
            others = [incoming_state] if isinstance(incoming_state, Metric) else list(incoming_state)
            mine = self.state_specs()
            for other in others:
                if not isinstance(other, Metric) or other.state_specs() != mine:
                    raise ValueError(
                        f"merge_state: expected metrics declaring the same states as this {type(self).__name__} "
                        f"({[s.describe() for s in mine]}), got {type(other).__name__}"
                    )
                self.check_options_of(other, "merge_state")
            merged = {
                n: self.combine_states(n, ordered(n, [moved(getattr(o, n), self.device) for o in others]))
                for n in self._specs
            }
            incoming_updated = any(o._updated for o in others)
        self._set_states(merged)
        self.__dict__["_updated"] = self._updated or incoming_updated
        self.__dict__["_cache"] = None
        return self

    def clone(self) -> "Metric":
        """A deep copy (states, cached result, options); the process group is shared, not copied."""
        return copy.deepcopy(self)

    def extra_repr(self) -> str:
        return ""


declare_metric_class(Metric)  # what base/interop.py registers with torchmetrics.Metric


def _wrap_update(fn: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(fn)
    def update(self: Metric, *args: Any, **kwargs: Any) -> Metric:
        if compiling():
            if not type(self).traceable_update:
                return _UPDATE_EAGERLY.call(self, fn, args, kwargs)
            return self._update_traced(fn, args, kwargs)
        d = self.__dict__
        lock = d["_lock"]
        lock.acquire()  # before reading _updating: another thread's update must not look nested
        try:  # (acquire/release: a third of the cost of a with statement, on every update)
            if d["_updating"]:  # super().update() from a subclass's update: counted once, outside
                fn(self, *args, **kwargs)
                return self
            if self._guards_inputs:
                check_readable(self, fn, args, kwargs)
            x = args[0] if args else None
            if not isinstance(x, torch.Tensor):
                x = first_tensor(args, kwargs)
            if x is not None and x.device != d["device"]:
                return self._update_elsewhere(fn, x, args, kwargs)
            return self._run_update(fn, args, kwargs)
        finally:
            lock.release()

    setattr(update, _WRAPPED, True)
    return update


def _update_eagerly_outside_the_graph(metric: Metric, fn: Callable[..., Any], args: tuple, kwargs: dict) -> Metric:
    """The update of a metric whose ``traceable_update`` is False, called inside ``torch.compile``:
    dynamo breaks the graph here and the update runs eagerly (``fullgraph=True`` refuses it,
    naming this function)."""
    return metric.update(*args, **kwargs)


_UPDATE_EAGERLY = OutsideTheGraph(
    _update_eagerly_outside_the_graph,
    "torchtally: this metric's update reads its input values in Python (traceable_update is False), so it "
    "runs eagerly at a graph break; with fullgraph=True, update it outside the compiled function",
)


def _wrap_compute(fn: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(fn)
    @locked
    def compute(self: Metric) -> Any:
        d = self.__dict__
        if d["_computing"]:  # nested (super().compute()) or a call from compute_on
            return fn(self)
        rejected = self.rejected_cuda_update()
        if self._should_sync():
            # Even with a cached result, the ranks must agree that nobody has new data.
            result = self._compute_synced(d["_cache"], rejected, fn)
        elif rejected is not None:
            raise rejected
        elif d["_cache"] is not None:
            return caller_copy(d["_cache"][0])
        else:
            if not d["_updated"]:
                self._never_updated(local=True)
            result = self.compute_on(None, fn)
            if self.results_recomputed:  # compute's own tensors: neither cached nor copied
                return result
        if self.compute_with_cache:
            d["_cache"] = (result,)
        return caller_copy(result)  # the caller's own: editing it leaves cache and state alone

    setattr(compute, _WRAPPED, True)
    setattr(compute, SUBCLASS_COMPUTE, (compute, fn))
    return compute


def _own_class(cls: type) -> bool:
    return cls.__module__ == "torchtally" or cls.__module__.startswith("torchtally.")


def _squeezing(fn: Callable[..., Any]) -> Callable[..., Any]:
    """A subclass's compute whose result has its one-element tensors squeezed (squeeze_results)."""

    @functools.wraps(fn)
    def compute(self: Metric) -> Any:
        return squeeze_if_scalar(fn(self))

    return compute
