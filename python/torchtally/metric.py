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

The torchmetrics behaviours (``forward``, the base keyword arguments, ``state_dict`` with
``persistent``, ``set_dtype``, arithmetic composition) follow torchmetrics; the differences
are listed in the Metric docstring.
"""
import contextlib
import copy
import functools
import warnings
from typing import Any, Callable, Dict, Hashable, Iterable, Iterator, List, Optional, Tuple, Union

import torch
from torch import nn

from . import dist
from .group_copy import GroupBoundCopy
from .composition import Composable
from .errors import NotComputableError
from . import kernels
from .metric_config import Configured
from .metric_guard import Guarded, caller_copy, locked, locked_sharing, new_lock
from .metric_options import BaseOptions
from .metric_placement import Placement
from .metric_state import HeldStates, canonical_device, combine, first_tensor, kwargs_filter
from .metric_state_dict import StateDict
from .plotting import plot_value
from .sync import UNCHANGED, StateSpec, SyncPlan, check_declarable, sync_states

_WRAPPED = "_torchtally_wrapped"
# Class attributes torchmetrics forbids changing on an instance.
_CONSTANTS = frozenset(
    {"higher_is_better", "is_differentiable", "full_state_update", "plot_lower_bound", "plot_upper_bound",
     "plot_legend_name"}
)


class Metric(Composable, GroupBoundCopy, Guarded, Configured, Placement, StateDict, nn.Module):
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
    ``compute_with_cache``; see torchtally.metric_options) and torchtally's:
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

    Options (``described_options``, torchtally.metric_config) differing across ranks raise
    SyncError, in ``merge_state`` / ``load_state_dict`` ValueError. One metric may be used from
    several threads; ``compute()`` returns copies (torchtally.metric_guard).
    """

    # torch.jit.script(metric) works as for torchmetrics' metrics (forward is not scripted):
    # these are left out of the scripted module.
    __jit_ignored_attributes__ = ["device", "state_key", "_plot_curve_axes"]
    __jit_unused_properties__ = ["is_differentiable", "higher_is_better", "plot_lower_bound", "plot_upper_bound",
                                 "plot_legend_name", "metric_state", "state_names", "dtype", "update_count",
                                 "update_called", "described_options"]
    state_key: Optional[Hashable] = None
    # torchmetrics' class attributes (each metric class sets its own values).
    is_differentiable: Optional[bool] = None
    higher_is_better: Optional[bool] = None
    full_state_update: Optional[bool] = None
    plot_lower_bound: Optional[float] = None
    plot_upper_bound: Optional[float] = None
    plot_legend_name: Optional[str] = None
    _plot_curve_axes: Optional[Tuple[int, int, str, str]] = None  # curves: which outputs plot() draws
    _reset_on_pickle = {**GroupBoundCopy._reset_on_pickle, "_computing": False, "_updating": False}
    _reset_on_copy = {"_state_group": None}  # a copy stands alone (a copied collection links its own)
    option_names: Optional[Tuple[str, ...]] = None  # None: every public attribute holding a plain value

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
        if recipient_rank is not None and (not isinstance(recipient_rank, int) or recipient_rank < 0):
            raise ValueError(f"recipient_rank must be None or a rank >= 0, got {recipient_rank!r}")
        if not isinstance(sync_on_compute, bool):
            raise ValueError(f"Expected keyword argument `sync_on_compute` to be a `bool` but got {sync_on_compute!r}")
        options = BaseOptions.from_kwargs(torchmetrics_options)
        d = self.__dict__
        d["_specs"] = {}  # name -> (reduce, default tensor), in declaration order
        d["_cat_chunks"] = {}  # cat state name -> list of row blocks (read back concatenated)
        d["_persistent"] = {}  # name -> whether state_dict() includes it
        d["_spec_version"] = 0
        d["_plan"] = None
        d["_updated"] = False  # holds data: an update, a load or a merge since the last reset
        d["_update_count"] = 0
        d["_cache"] = None  # (result,) once computed
        d["_computing"] = False
        d["_updating"] = False
        d["_if_never_updated"] = "warn"  # compute() with no update anywhere: "warn" or "raise"
        d["_local_while_synced"] = None  # this rank's states while sync() has swapped synced ones in
        d["_dtype"] = torch.get_default_dtype()  # the dtype of float results (see set_dtype)
        d["_forward_cache"] = None
        d["_options"] = None  # described on first use (torchtally.metric_config)
        d["_lock"], d["_state_group"] = new_lock(), None  # see torchtally.metric_guard
        self.sync_on_compute = sync_on_compute
        self.process_group = process_group
        self.sync_timeout = dist.timeout_seconds(sync_timeout)
        self.recipient_rank = recipient_rank
        d["device"] = canonical_device(device) if device is not None else torch.device("cpu")
        self.compute_on_cpu = options.compute_on_cpu
        self.dist_sync_on_step = options.dist_sync_on_step
        self.dist_sync_fn = options.dist_sync_fn
        self.distributed_available_fn = options.distributed_available_fn
        self.compute_with_cache = options.compute_with_cache

    # -- declaring and holding state ----------------------------------------------------

    def add_state(self, name: str, default: torch.Tensor, reduce: Optional[str] = None, persistent: bool = False,
                  *, dist_reduce_fx: Optional[str] = None) -> None:
        """Declare a state. ``default`` fixes its dtype and shape (for cat/merge: the shape of a
        row, i.e. the dims after 0) and is what ``reset`` restores. A cat default must have 0
        rows. ``reduce`` (torchmetrics' name: ``dist_reduce_fx``) is one of sum (the default),
        max, min, prod, cat, merge. ``persistent``: whether ``state_dict()`` includes it."""
        if "_specs" not in self.__dict__:
            raise RuntimeError(f"{type(self).__name__}.__init__ must call super().__init__() before add_state")
        if reduce is not None and dist_reduce_fx is not None and reduce != dist_reduce_fx:
            raise ValueError(f"add_state('{name}'): give reduce or dist_reduce_fx, not both")
        reduce = reduce or dist_reduce_fx or "sum"
        if not isinstance(name, str) or not name.isidentifier():
            raise ValueError(f"add_state: name must be a Python identifier, got {name!r}")
        if name in self._specs:
            raise ValueError(f"add_state: state '{name}' is already declared")
        if hasattr(type(self), name) or name in self.__dict__:
            raise ValueError(f"add_state: name '{name}' clashes with an attribute of {type(self).__name__}")
        if isinstance(default, list):
            raise TypeError(
                f"add_state('{name}'): list states are not supported; declare a 'cat' state with a tensor "
                "default of 0 rows (e.g. torch.empty(0) or torch.empty(0, C)) and add rows with append_state"
            )
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
        self._specs[name] = (reduce, default)
        self._persistent[name] = bool(persistent)
        if reduce == "cat":
            self._cat_chunks[name] = []
        else:
            self.__dict__[name] = default.clone()
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
        if rows.dim() != default.dim() or rows.shape[1:] != default.shape[1:]:
            want = ("N",) + tuple(default.shape[1:])
            raise ValueError(f"{where}('{name}'): expected shape {want}, got {tuple(rows.shape)}")
        if rows.is_meta and self.device.type != "meta":
            raise ValueError(f"{where}('{name}'): expected a tensor holding values, got a meta tensor")
        return rows.detach().to(self.device)

    def __getattr__(self, name: str) -> Any:
        # Only reached when normal lookup fails: cat states live outside __dict__, submodules
        # in nn.Module's registry.
        chunks = self.__dict__.get("_cat_chunks")
        if chunks is not None and name in chunks:
            parts = chunks[name]
            if len(parts) != 1:
                whole = torch.cat(parts) if parts else self._specs[name][1].clone()
                parts[:] = [whole]
            return parts[0]
        return nn.Module.__getattr__(self, name)

    def __setattr__(self, name: str, value: Any) -> None:
        d = self.__dict__
        specs = d.get("_specs")
        if specs is not None and name in specs:
            if name in d["_cat_chunks"]:
                d["_cat_chunks"][name] = [self._check_rows(name, value, "assigning")]
            else:
                d[name] = value  # a fixed state: the fast path of every update
        elif name in _CONSTANTS:
            raise RuntimeError(f"Can't change const `{name}`.")
        else:
            nn.Module.__setattr__(self, name, value)
            if d.get("_options") is not None:
                self._option_assigned(name)

    @property
    def state_names(self) -> Tuple[str, ...]:
        return tuple(self._specs)

    def state_reduce(self, name: str) -> str:
        return self._specs[name][0]

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
        return self.__dict__["_update_count"]

    @property
    def update_called(self) -> bool:
        return self.__dict__["_update_count"] > 0

    def _state_values(self) -> List[torch.Tensor]:
        return [getattr(self, name) for name in self._specs]

    def _tensor_states(self) -> List[torch.Tensor]:
        """The states kept as one tensor (not the "cat" chunk lists): what the kernels update."""
        return [self.__dict__[n] for n, (reduce, _) in self._specs.items() if reduce != "cat"]

    def _set_states(self, states: Dict[str, torch.Tensor]) -> None:
        for name, value in states.items():
            if name in self._cat_chunks:
                self._cat_chunks[name] = [value]
            else:
                self.__dict__[name] = value

    def _hold_states(self) -> HeldStates:
        """References to the current state objects (no copies): reset() replaces them with new
        objects, so holding them is enough to put them back or to combine with them."""
        d = self.__dict__
        return HeldStates(
            {n: (list(self._cat_chunks[n]) if n in self._cat_chunks else d[n]) for n in self._specs},
            d["_updated"], d["_update_count"], d["_cache"],
        )

    def _restore_states(self, held: HeldStates) -> None:
        d = self.__dict__
        for name, value in held.values.items():
            if name in self._cat_chunks:
                self._cat_chunks[name] = value
            else:
                d[name] = value
        d["_updated"], d["_update_count"], d["_cache"] = held.updated, held.update_count, held.cache

    def _reset_states(self) -> None:
        for name, (reduce, default) in self._specs.items():
            if reduce == "cat":
                self._cat_chunks[name] = []
            else:
                self.__dict__[name] = default.clone()

    # -- CUDA rejections (see functional.kernels.set_cuda_checks) ----------------------

    def _raise_rejected_cuda_updates(self) -> None:
        """The CUDA kernels check values on the device and report a rejected batch later (its
        counts already undone): before computing from the state, wait for those checks and
        raise the first rejection."""
        if self.__dict__["device"].type == "cuda":
            kernels.raise_rejected_cuda_updates(self._tensor_states())

    def _rejected_cuda_update(self) -> Optional[ValueError]:
        """The first rejected CUDA batch of this metric's state (waiting for its checks), as the
        exception to raise, or None. Under torch.distributed the sync announces it to every rank
        (sync_states' local_error) instead of this rank leaving the others waiting."""
        try:
            self._raise_rejected_cuda_updates()
        except ValueError as exc:
            return exc
        return None

    def _forget_rejected_cuda_updates(self) -> None:
        """A rejection not yet raised dies with the state it concerned (reset, load, deletion):
        the allocator will hand that memory to other tensors."""
        if self.__dict__["device"].type == "cuda":
            kernels.forget_rejected_cuda_updates(self._tensor_states())

    def __del__(self) -> None:
        try:
            self._forget_rejected_cuda_updates()
        except Exception:  # a half-built metric, or interpreter shutdown
            pass

    # -- the subclass's update/compute, wrapped -----------------------------------------

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        for attr, wrap in (("update", _wrap_update), ("compute", _wrap_compute)):
            fn = cls.__dict__.get(attr)
            if fn is not None and callable(fn) and not getattr(fn, _WRAPPED, False):
                setattr(cls, attr, wrap(fn))
        update = cls.__dict__.get("update")
        if update is not None:
            cls._update_kwargs_filter = staticmethod(kwargs_filter(update))

    _update_kwargs_filter: Callable[[Dict[str, Any]], Dict[str, Any]] = staticmethod(lambda kwargs: kwargs)

    def accepted_update_kwargs(self, kwargs: Dict[str, Any]) -> Dict[str, Any]:
        """The keyword arguments ``update`` takes (all of them when it takes ``**kwargs``):
        what a MetricCollection passes to this metric of the keyword arguments it received."""
        return type(self)._update_kwargs_filter(kwargs)

    def update(self, *args: Any, **kwargs: Any) -> "Metric":
        raise NotImplementedError(f"{type(self).__name__} must implement update()")

    def compute(self) -> Any:
        raise NotImplementedError(f"{type(self).__name__} must implement compute()")

    def _run_update(self, fn: Callable[..., Any], args: tuple, kwargs: dict) -> "Metric":
        d = self.__dict__
        if d.get("_options") is None:  # settle which attributes are options before an update adds any
            self.described_options
        d["_cache"] = None
        d["_updating"] = True
        d["_update_inputs"] = (args, kwargs)  # the caller's tensors: append_state must not keep them
        try:
            fn(self, *args, **kwargs)
        finally:
            d["_updating"] = False
            d["_update_inputs"] = None
        d["_updated"] = True
        d["_update_count"] += 1
        if self.compute_on_cpu:
            self._move_cat_states_to_cpu()
        if d["_state_group"] is not None:
            self._share_my_state()
        return self

    def _move_cat_states_to_cpu(self) -> None:
        cpu = torch.device("cpu")
        for name, parts in self._cat_chunks.items():
            if any(p.device != cpu for p in parts):
                self._cat_chunks[name] = [p.to(cpu) for p in parts]

    @locked
    def compute_local(self) -> Any:
        """compute() on this rank's state only: no sync, no cache."""
        self._raise_rejected_cuda_updates()
        if not self._updated:
            self._never_updated(local=True)
        return caller_copy(self._compute_with(None))

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

    def _combine_states(self, name: str, values: List[torch.Tensor]) -> torch.Tensor:
        reduce = self._specs[name][0]
        return self.merge_state_values(name, values) if reduce == "merge" else combine(reduce, values)

    # -- forward: the batch's value, and the batch accumulated -------------------------

    @torch.jit.unused
    @locked_sharing
    def forward(self, *args: Any, **kwargs: Any) -> Any:
        """The metric over this batch alone (synced over ranks with ``dist_sync_on_step``), with
        the batch also added to the accumulated state. Every rank must call it when it syncs."""
        if self.__dict__["_local_while_synced"] is not None:
            raise RuntimeError("The Metric shouldn't be synced when performing ``forward``. HINT: call ``unsync()``")
        x = first_tensor(args, kwargs)
        if x is not None and x.device != self.__dict__["device"]:
            if self._updated:
                raise self._device_mismatch(type(self).update, args, kwargs, x)
            self._place(x.device, states=True)
        if self.full_state_update is False:
            value = self._forward_combining(args, kwargs)
        else:
            value = self._forward_twice(args, kwargs)
        self.__dict__["_forward_cache"] = value
        return value

    def _forward_combining(self, args: tuple, kwargs: dict) -> Any:
        """One update on fresh states, the batch value from them, then the accumulated states
        combined with the batch's by each state's reduce."""
        held = self._hold_states()
        self._reset_states()
        self.__dict__["_updated"] = False
        try:
            self.update(*args, **kwargs)
            value = self._batch_value()
        except BaseException:
            self._restore_states(held)
            raise
        d = self.__dict__
        combined = {}
        try:  # a merge may refuse the pair (e.g. R2Score's outputs differ from earlier batches')
            for name, (reduce, _) in self._specs.items():
                if reduce == "cat":
                    combined[name] = held.values[name] + self._cat_chunks[name]
                else:
                    combined[name] = self._combine_states(name, [held.values[name], d[name]])
        except BaseException:
            self._restore_states(held)
            raise
        for name, both in combined.items():
            if name in self._cat_chunks:
                self._cat_chunks[name] = both
            else:
                d[name] = both
        d["_updated"], d["_update_count"], d["_cache"] = True, held.update_count + 1, None
        return value

    def _forward_twice(self, args: tuple, kwargs: dict) -> Any:
        """For a metric whose update reads its accumulated state: update it, then compute the
        batch value from a second update on fresh states."""
        self.update(*args, **kwargs)
        held = self._hold_states()
        self._reset_states()
        self.__dict__["_updated"] = False
        try:
            self.update(*args, **kwargs)
            return self._batch_value()
        finally:
            self._restore_states(held)
            self.__dict__["_cache"] = None

    def _batch_value(self) -> Any:
        if self.dist_sync_on_step and self._should_sync():
            return self._compute_synced(None)
        return self._compute_with(None)

    # -- compute and sync ---------------------------------------------------------------

    def _should_sync(self) -> bool:
        if not self.sync_on_compute:
            return False
        available = self.distributed_available_fn
        if available is not None and not available():
            return False
        return dist.needs_sync(self.process_group)

    def _compute_with(self, states: Optional[Dict[str, torch.Tensor]]) -> Any:
        """Run the subclass's compute, on ``states`` swapped in for the call when given."""
        d = self.__dict__
        saved = None
        if states is not None:
            # Keep the original objects (cat lists may be shared within a collection).
            saved = {n: (self._cat_chunks[n] if n in self._cat_chunks else d[n]) for n in states}
        d["_computing"] = True
        try:
            if states is not None:
                self._set_states(states)
            return type(self).compute(self)
        finally:
            d["_computing"] = False
            if saved is not None:
                for n, old in saved.items():
                    if n in self._cat_chunks:
                        self._cat_chunks[n] = old
                    else:
                        d[n] = old

    def _compute_synced(self, cache: Optional[Tuple[Any]], rejected: Optional[ValueError] = None) -> Any:
        synced = self._synced_states(dirty=cache is None, rejected=rejected)
        if synced is UNCHANGED:
            return cache[0]  # type: ignore[index]
        if synced is None:
            return None
        return self._compute_with(synced)

    def _synced_states(self, dirty: bool = True, rejected: Optional[ValueError] = None,
                       gather_fn: Optional[Callable[..., Any]] = None, group: Optional[Any] = None) -> Any:
        """Every rank's states combined: {name: tensor}, UNCHANGED (nobody has new data), or None
        on a rank that is not the recipient."""
        names = list(self._specs)
        group = self.process_group if group is None else group
        gather_fn = gather_fn or self.dist_sync_fn
        if gather_fn is not None:
            if rejected is not None:
                raise rejected
            return {n: self._combine_states(n, list(gather_fn(getattr(self, n), group=group))) for n in names}

        def require_update(updated_anywhere: List[bool]) -> None:
            if not updated_anywhere[0]:
                self._never_updated(local=False)

        synced = sync_states(
            self._sync_plan(),
            self._state_values(),
            group=group,
            timeout_s=self.sync_timeout,
            recipient=self.recipient_rank,
            updated=[self._updated],
            merge=lambda i, values: self.merge_state_values(names[i], values),
            on_header=require_update,
            dirty=dirty,
            local_error=rejected,
        )
        if synced is UNCHANGED or synced is None:
            return synced
        return dict(zip(names, synced))

    def _state_specs(self, label_prefix: str = "", unit: int = 0) -> List[StateSpec]:
        specs = []
        for name, (reduce, default) in self._specs.items():
            shape = tuple(default.shape[1:]) if reduce in ("cat", "merge") else tuple(default.shape)
            label = f"{label_prefix}{type(self).__name__}.{name}"
            specs.append(StateSpec(label, reduce, default.dtype, shape, unit))
        return specs

    def _sync_plan(self) -> SyncPlan:
        if self._plan is None:
            options = [(type(self).__name__, self.described_options)]
            self.__dict__["_plan"] = SyncPlan(self._state_specs(), n_units=1, options=options)
        return self._plan

    def _never_updated(self, local: bool) -> None:
        """compute() with no update (on this rank, or on any rank): torchmetrics warns and
        computes over the empty state; the ignite-style API raises NotComputableError."""
        where = "on this rank" if local else "on any rank"
        if self.__dict__["_if_never_updated"] == "raise":
            raise NotComputableError(
                f"{type(self).__name__}.compute() needs at least one update() {where} since the last reset(); "
                "none was made"
            )
        warnings.warn(
            f"The ``compute`` method of metric {type(self).__name__} was called before the ``update`` method "
            f"({where}): the result is computed over no data.",
            UserWarning,
            stacklevel=4,
        )

    @contextlib.contextmanager
    def raising_if_never_updated(self) -> Iterator["Metric"]:
        """Within this context, compute() raises NotComputableError when no rank updated the
        metric since its reset (ignite's rule), instead of warning (torchmetrics')."""
        d = self.__dict__
        before, d["_if_never_updated"] = d["_if_never_updated"], "raise"
        try:
            yield self
        finally:
            d["_if_never_updated"] = before

    # -- torchmetrics' manual sync ------------------------------------------------------

    @locked
    def sync(self, dist_sync_fn: Optional[Callable[..., Any]] = None, process_group: Optional[Any] = None,
             should_sync: bool = True, distributed_available: Optional[Callable[[], bool]] = None) -> None:
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
        d["_local_while_synced"] = self._hold_states()
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
        self._restore_states(held)
        self.__dict__["_local_while_synced"] = None

    @contextlib.contextmanager
    def sync_context(self, dist_sync_fn: Optional[Callable[..., Any]] = None, process_group: Optional[Any] = None,
                     should_sync: bool = True, should_unsync: bool = True,
                     distributed_available: Optional[Callable[[], bool]] = None) -> Iterator[None]:
        self.sync(dist_sync_fn, process_group, should_sync, distributed_available)
        try:
            yield
        finally:
            self.unsync(should_unsync=self.__dict__["_local_while_synced"] is not None and should_unsync)

    # -- lifecycle ----------------------------------------------------------------------

    @locked_sharing
    def reset(self) -> "Metric":
        """Restore every state to its declared default and forget the cached result."""
        self._forget_rejected_cuda_updates()
        self._reset_states()
        d = self.__dict__
        d["_updated"] = False
        d["_update_count"] = 0
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
        that differs); a dict carries none, so it is not checked."""
        if isinstance(incoming_state, dict):
            checked = self._check_state_dict(incoming_state, strict=True, where="merge_state")
            merged = {n: self._combine_states(n, [getattr(self, n), checked[n]]) for n in self._specs}
            incoming_updated = True
        else:
            others = [incoming_state] if isinstance(incoming_state, Metric) else list(incoming_state)
            mine = self._state_specs()
            for other in others:
                if not isinstance(other, Metric) or other._state_specs() != mine:
                    raise ValueError(
                        f"merge_state: expected metrics declaring the same states as this {type(self).__name__} "
                        f"({[s.describe() for s in mine]}), got {type(other).__name__}"
                    )
                self._check_options_of(other, "merge_state")
            merged = {
                n: self._combine_states(n, [getattr(self, n)] + [getattr(o, n).to(self.device) for o in others])
                for n in self._specs
            }
            incoming_updated = any(o._updated for o in others)
        self._set_states(merged)
        self.__dict__["_updated"] = self._updated or incoming_updated
        self.__dict__["_cache"] = None
        return self

    def plot(self, val: Any = None, ax: Any = None) -> Tuple[Any, Any]:
        """Draw ``val`` (default: ``compute()``; a list of results draws them over steps) with
        matplotlib on ``ax`` (a new figure when None); returns (figure, axes). See
        torchtally.plotting for what each kind of result looks like."""
        return plot_value(self.compute() if val is None else val, ax, type(self).__name__, self.higher_is_better,
                          self.plot_lower_bound, self.plot_upper_bound, self._plot_curve_axes)

    def clone(self) -> "Metric":
        """A deep copy (states, cached result, options); the process group is shared, not copied."""
        return copy.deepcopy(self)

    def extra_repr(self) -> str:
        return ""


def _wrap_update(fn):
    @functools.wraps(fn)
    def update(self, *args, **kwargs):
        d = self.__dict__
        lock = d["_lock"]
        lock.acquire()  # before reading _updating: another thread's update must not look nested
        try:  # (acquire/release: a third of the cost of a with statement, on every update)
            if d["_updating"]:  # super().update() from a subclass's update: counted once, outside
                fn(self, *args, **kwargs)
                return self
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


def _wrap_compute(fn):
    @functools.wraps(fn)
    @locked
    def compute(self):
        d = self.__dict__
        if d["_computing"]:  # nested (super().compute()) or a call from _compute_with
            return fn(self)
        rejected = self._rejected_cuda_update()
        if self._should_sync():
            # Even with a cached result, the ranks must agree that nobody has new data.
            result = self._compute_synced(d["_cache"], rejected)
        elif rejected is not None:
            raise rejected
        elif d["_cache"] is not None:
            return caller_copy(d["_cache"][0])
        else:
            if not d["_updated"]:
                self._never_updated(local=True)
            result = self._compute_with(None)
        if self.compute_with_cache:
            d["_cache"] = (result,)
        return caller_copy(result)  # the caller's own: editing it leaves cache and state alone

    setattr(compute, _WRAPPED, True)
    return compute
