"""Metric: declared state, a cached compute, and sync across ranks on compute.

A subclass declares its state once in ``__init__`` with ``add_state`` and implements
``update`` and ``compute`` on it; the base class does the rest (see the Metric docstring).

State kinds, by ``reduce`` (how ranks, and ``merge_state``, combine them):

  "sum" | "max" | "min" | "prod"   fixed-shape tensors, combined elementwise;
  "cat"                            a tensor whose dim 0 grows: rows are appended with
                                   ``append_state(name, rows)`` and read back as one tensor
                                   (``self.<name>``); ranks' rows are concatenated in rank order;
  "merge"                          a tensor combined by the metric's own
                                   ``merge_state_values(name, values)``, e.g. Chan's formula for
                                   moments. Its dim 0 may vary; the rest of its shape is fixed.
"""
import copy
import functools
import inspect
from typing import Any, Dict, Hashable, Iterable, List, Optional, Tuple

import torch

from . import dist
from ._group_copy import GroupBoundCopy
from .errors import NotComputableError
from .functional import _kernels
from .metric_options import BaseOptions
from .sync import UNCHANGED, SyncPlan, StateSpec, check_declarable, sync_states

_WRAPPED = "_torchtally_wrapped"


class Metric(GroupBoundCopy):
    """Base class of torchtally metrics.

    Subclasses declare state with ``add_state`` and write plain ``update`` / ``compute``
    methods that read and assign ``self.<state>``. The base class wraps them so that:

    * ``update(...)`` returns ``self``, drops the cached result and marks the metric updated;
    * ``compute()`` raises NotComputableError before any update (on any rank), returns the
      global result when torch.distributed is initialised with more than one rank (and
      ``sync_on_compute``), and caches the result until the next ``update`` or ``reset``;
    * sync never changes local state: ``compute`` runs on synced copies swapped in for the
      duration of the call (restored even if it raises), so updating after ``compute`` keeps
      accumulating this rank's data only.

    In a distributed run ``compute()`` is a collective: every rank of the process group must
    call it, also ranks that saw no data. When no rank has updated since the last compute, the
    cached result is returned after one small header exchange (no data moves); a rank that saw
    no new data still takes part when others did, so results stay right with uneven shards.

    Keyword-only options: ``sync_on_compute`` (default True), ``process_group`` (default: the
    world), ``sync_timeout`` (seconds or timedelta, default 300 s; after it the sync raises
    SyncError naming the ranks that did not answer), ``recipient_rank`` (None: result on every
    rank; a rank of the group: only that rank gets the result, the others get None), and
    ``device``: where the states start (default CPU).

    Device: the state follows the input. While the metric holds no data (freshly made, or
    after ``reset()``), an ``update`` whose first tensor argument (positional or keyword;
    non-tensors are skipped) is on another device first moves the states, their defaults and
    any cat rows there, so ``Metric()`` needs no ``device=`` and no ``.to()`` for CUDA inputs.
    ``device=`` therefore sets only the initial placement: a placement fixed for good would
    make every later batch on the model's device fail, because the kernels do not mix
    devices. Once the metric holds data (an accepted update, ``load_state_dict``, a
    ``merge_state`` with data), an input on another device raises ValueError naming the
    argument and both devices, with the state unchanged; ``reset()`` or an explicit
    ``.to(device)`` (allowed at any time) lets it move. A rejected first update also puts
    the state back where it was. When devices already match this costs one device compare.

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
        >>> Mean().update(torch.tensor([1.0, 2.0])).update(torch.tensor([6.0])).compute()
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
    """

    state_key: Optional[Hashable] = None
    # torchmetrics' class attributes (each metric class sets its own values).
    is_differentiable: Optional[bool] = None
    higher_is_better: Optional[bool] = None
    full_state_update: Optional[bool] = None
    _reset_on_pickle = {**GroupBoundCopy._reset_on_pickle, "_computing": False}

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
        if recipient_rank is not None and (not isinstance(recipient_rank, int) or recipient_rank < 0):
            raise ValueError(f"recipient_rank must be None or a rank >= 0, got {recipient_rank!r}")
        options = BaseOptions.from_kwargs(torchmetrics_options)
        d = self.__dict__
        d["_specs"] = {}  # name -> (reduce, default tensor), in declaration order
        d["_cat_chunks"] = {}  # cat state name -> list of row blocks (read back concatenated)
        d["_spec_version"] = 0
        d["_plan"] = None
        d["_updated"] = False
        d["_cache"] = None  # (result,) once computed
        d["_computing"] = False
        d["_dtype"] = torch.get_default_dtype()  # the dtype of float results (see set_dtype)
        self.sync_on_compute = bool(sync_on_compute)
        self.process_group = process_group
        self.sync_timeout = dist.timeout_seconds(sync_timeout)
        self.recipient_rank = recipient_rank
        self.device = _canonical_device(device) if device is not None else torch.device("cpu")
        self.compute_on_cpu = options.compute_on_cpu
        self.dist_sync_on_step = options.dist_sync_on_step
        self.dist_sync_fn = options.dist_sync_fn
        self.distributed_available_fn = options.distributed_available_fn
        self.compute_with_cache = options.compute_with_cache

    @property
    def dtype(self) -> torch.dtype:
        """The dtype of this metric's floating-point results (torch's default dtype when the
        metric was made; ``set_dtype`` changes it). Accumulators keep their own exact dtypes."""
        return self.__dict__["_dtype"]

    # -- declaring and holding state ----------------------------------------------------

    def add_state(self, name: str, default: torch.Tensor, reduce: str = "sum") -> None:
        """Declare a state. ``default`` fixes its dtype and shape (for cat/merge: the shape of a
        row, i.e. the dims after 0) and is what ``reset`` restores. A cat default must have 0 rows."""
        if "_specs" not in self.__dict__:
            raise RuntimeError(f"{type(self).__name__}.__init__ must call super().__init__() before add_state")
        if not isinstance(name, str) or not name.isidentifier():
            raise ValueError(f"add_state: name must be a Python identifier, got {name!r}")
        if name in self._specs:
            raise ValueError(f"add_state: state '{name}' is already declared")
        if hasattr(type(self), name) or name in self.__dict__:
            raise ValueError(f"add_state: name '{name}' clashes with an attribute of {type(self).__name__}")
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
        if reduce == "cat":
            self._cat_chunks[name] = []
        else:
            self.__dict__[name] = default.clone()
        self.__dict__["_spec_version"] += 1
        self.__dict__["_plan"] = None

    def append_state(self, name: str, rows: torch.Tensor) -> None:
        """Append ``rows`` (dim 0 = rows, the rest = the declared row shape) to cat state ``name``.

        Blocks are kept in a list and concatenated when ``self.<name>`` is read, so appending is
        O(1). The tensor is kept by reference (detached), not copied.
        """
        if name not in self._cat_chunks:
            raise ValueError(f"append_state: '{name}' is not a 'cat' state of {type(self).__name__}")
        self._cat_chunks[name].append(self._check_rows(name, rows, "append_state"))

    def _check_rows(self, name: str, rows: Any, where: str) -> torch.Tensor:
        default = self._specs[name][1]
        if not isinstance(rows, torch.Tensor):
            raise TypeError(f"{where}('{name}'): expected a tensor, got {type(rows).__name__}")
        if rows.dtype != default.dtype:
            raise TypeError(f"{where}('{name}'): expected dtype {default.dtype}, got {rows.dtype}")
        if rows.dim() != default.dim() or rows.shape[1:] != default.shape[1:]:
            want = ("N",) + tuple(default.shape[1:])
            raise ValueError(f"{where}('{name}'): expected shape {want}, got {tuple(rows.shape)}")
        return rows.detach().to(self.device)

    def __getattr__(self, name: str) -> Any:
        # Only reached when normal lookup fails: cat states live outside __dict__.
        chunks = self.__dict__.get("_cat_chunks")
        if chunks is not None and name in chunks:
            parts = chunks[name]
            if len(parts) != 1:
                whole = torch.cat(parts) if parts else self._specs[name][1].clone()
                parts[:] = [whole]
            return parts[0]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name: str, value: Any) -> None:
        chunks = self.__dict__.get("_cat_chunks")
        if chunks is not None and name in chunks:
            chunks[name] = [self._check_rows(name, value, "assigning")]
        else:
            object.__setattr__(self, name, value)

    @property
    def state_names(self) -> Tuple[str, ...]:
        return tuple(self._specs)

    def state_reduce(self, name: str) -> str:
        return self._specs[name][0]

    def _state_values(self) -> List[torch.Tensor]:
        return [getattr(self, name) for name in self._specs]

    def _tensor_states(self) -> List[torch.Tensor]:
        """The states kept as one tensor (not the "cat" chunk lists): what the kernels update."""
        return [self.__dict__[n] for n, (reduce, _) in self._specs.items() if reduce != "cat"]

    def _raise_rejected_cuda_updates(self) -> None:
        """The CUDA kernels check values on the device and report a rejected batch later (its
        counts already undone; see functional._kernels.set_cuda_checks): before computing from
        the state, wait for those checks and raise the first rejection."""
        if self.__dict__["device"].type == "cuda":
            _kernels.raise_rejected_cuda_updates(self._tensor_states())

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
            _kernels.forget_rejected_cuda_updates(self._tensor_states())

    def __del__(self) -> None:
        try:
            self._forget_rejected_cuda_updates()
        except Exception:  # a half-built metric, or interpreter shutdown
            pass

    def _set_states(self, states: Dict[str, torch.Tensor]) -> None:
        for name, value in states.items():
            if name in self._cat_chunks:
                self._cat_chunks[name] = [value]
            else:
                self.__dict__[name] = value

    # -- the subclass's update/compute, wrapped -----------------------------------------

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        for attr, wrap in (("update", _wrap_update), ("compute", _wrap_compute)):
            fn = cls.__dict__.get(attr)
            if fn is not None and callable(fn) and not getattr(fn, _WRAPPED, False):
                setattr(cls, attr, wrap(fn))

    def update(self, *args: Any, **kwargs: Any) -> "Metric":
        raise NotImplementedError(f"{type(self).__name__} must implement update()")

    def compute(self) -> Any:
        raise NotImplementedError(f"{type(self).__name__} must implement compute()")

    def compute_local(self) -> Any:
        """compute() on this rank's state only: no sync, no cache."""
        self._raise_rejected_cuda_updates()
        if not self._updated:
            raise NotComputableError(self._not_computable_message(local=True))
        return self._compute_with(None)

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

    def _should_sync(self) -> bool:
        return self.sync_on_compute and dist.needs_sync(self.process_group)

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
        names = list(self._specs)

        def require_update(updated_anywhere: List[bool]) -> None:
            if not updated_anywhere[0]:
                raise NotComputableError(self._not_computable_message(local=False))

        synced = sync_states(
            self._sync_plan(),
            self._state_values(),
            group=self.process_group,
            timeout_s=self.sync_timeout,
            recipient=self.recipient_rank,
            updated=[self._updated],
            merge=lambda i, values: self.merge_state_values(names[i], values),
            on_header=require_update,
            dirty=cache is None,
            local_error=rejected,
        )
        if synced is UNCHANGED:
            return cache[0]  # type: ignore[index]
        if synced is None:
            return None
        return self._compute_with(dict(zip(names, synced)))

    def _state_specs(self, label_prefix: str = "", unit: int = 0) -> List[StateSpec]:
        specs = []
        for name, (reduce, default) in self._specs.items():
            shape = tuple(default.shape[1:]) if reduce in ("cat", "merge") else tuple(default.shape)
            label = f"{label_prefix}{type(self).__name__}.{name}"
            specs.append(StateSpec(label, reduce, default.dtype, shape, unit))
        return specs

    def _sync_plan(self) -> SyncPlan:
        if self._plan is None:
            self.__dict__["_plan"] = SyncPlan(self._state_specs(), n_units=1)
        return self._plan

    def _not_computable_message(self, local: bool) -> str:
        where = "on this rank" if local else "on any rank"
        return (
            f"{type(self).__name__}.compute() needs at least one update() {where} since the last reset(); "
            "none was made"
        )

    # -- lifecycle ----------------------------------------------------------------------

    def reset(self) -> "Metric":
        """Restore every state to its declared default and forget the cached result."""
        self._forget_rejected_cuda_updates()
        for name, (reduce, default) in self._specs.items():
            if reduce == "cat":
                self._cat_chunks[name] = []
            else:
                self.__dict__[name] = default.clone()
        self.__dict__["_updated"] = False
        self.__dict__["_cache"] = None
        return self

    def merge_state(self, others: Iterable["Metric"]) -> "Metric":
        """Fold the states of ``others`` (same states declared) into this metric, by each
        state's reduce, as if this metric had seen their data too. ``others`` are unchanged."""
        others = list(others)
        mine = self._state_specs()
        for other in others:
            if not isinstance(other, Metric) or other._state_specs() != mine:
                raise ValueError(
                    f"merge_state: expected metrics declaring the same states as this {type(self).__name__} "
                    f"({[s.describe() for s in mine]}), got {type(other).__name__}"
                )
        merged = {}
        for name, (reduce, _) in self._specs.items():
            values = [getattr(self, name)] + [getattr(o, name).to(self.device) for o in others]
            merged[name] = _combine(reduce, values) if reduce != "merge" else self.merge_state_values(name, values)
        self._set_states(merged)
        self.__dict__["_updated"] = self._updated or any(o._updated for o in others)
        self.__dict__["_cache"] = None
        return self

    def state_dict(self) -> Dict[str, torch.Tensor]:
        """Copies of the states, by name (cat states concatenated)."""
        return {name: getattr(self, name).detach().clone() for name in self._specs}

    def load_state_dict(self, state_dict: Dict[str, torch.Tensor], strict: bool = True) -> "Metric":
        """Load states saved by ``state_dict``; the metric then counts as updated. All entries
        are checked before any is assigned, so a bad state_dict leaves the metric unchanged."""
        checked = self._check_state_dict(state_dict, strict)
        self._forget_rejected_cuda_updates()  # the loaded states replace what they concerned
        self._set_states(checked)
        self.__dict__["_updated"] = True
        self.__dict__["_cache"] = None
        return self

    def _check_state_dict(self, state_dict: Dict[str, torch.Tensor], strict: bool) -> Dict[str, torch.Tensor]:
        if strict:
            missing = [n for n in self._specs if n not in state_dict]
            unexpected = [k for k in state_dict if k not in self._specs]
            if missing or unexpected:
                raise KeyError(
                    f"{type(self).__name__}.load_state_dict: missing states {missing}, unexpected keys {unexpected}"
                )
        checked = {}
        for name, (reduce, default) in self._specs.items():
            if name not in state_dict:
                continue
            value = state_dict[name]
            if reduce in ("cat", "merge"):
                value = self._check_rows(name, value, "load_state_dict")
            else:
                if not isinstance(value, torch.Tensor):
                    raise TypeError(f"load_state_dict('{name}'): expected a tensor, got {type(value).__name__}")
                if value.dtype != default.dtype or value.shape != default.shape:
                    raise ValueError(
                        f"load_state_dict('{name}'): expected dtype {default.dtype} shape {tuple(default.shape)}, "
                        f"got dtype {value.dtype} shape {tuple(value.shape)}"
                    )
            checked[name] = value.detach().to(self.device).clone()
        return checked

    def to(self, device: Any) -> "Metric":
        """Move states (and their defaults) to ``device``; returns self. Allowed at any time,
        also when the metric holds data. A CUDA batch rejected on the device and not yet raised
        is raised here, before its state's memory is left behind."""
        device = _canonical_device(device)
        if device != self.__dict__["device"]:
            self._raise_rejected_cuda_updates()
        self._place(device, states=True)
        self.__dict__["_cache"] = None
        return self

    # -- placement: the state follows the input's device (see the class docstring) -------

    def _place(self, device: torch.device, states: bool) -> None:
        """Put the defaults (and with ``states`` the states) on ``device``. New objects
        throughout (a new spec dict, new block lists), so a ``_placement()`` taken before
        still holds the old ones."""
        d = self.__dict__
        d["device"] = device
        d["_specs"] = {name: (reduce, default.to(device)) for name, (reduce, default) in self._specs.items()}
        if not states:
            return
        for name, (reduce, _) in self._specs.items():
            if reduce == "cat":
                self._cat_chunks[name] = [c.to(device) for c in self._cat_chunks[name]]
            else:
                d[name] = d[name].to(device)

    def _placement(self) -> Tuple[Any, ...]:
        """What ``_restore_placement`` needs to undo a ``_place``: references, no copies."""
        d = self.__dict__
        fixed = {n: d[n] for n in self._specs if n not in self._cat_chunks}
        return d["device"], d["_specs"], fixed, dict(self._cat_chunks), d["_cache"]

    def _restore_placement(self, placement: Tuple[Any, ...]) -> None:
        d = self.__dict__
        d["device"], d["_specs"], fixed, chunks, d["_cache"] = placement
        d.update(fixed)
        self._cat_chunks.update(chunks)

    def _device_mismatch(self, fn: Any, args: tuple, kwargs: dict, got: torch.Tensor,
                         where: str = "this metric's state is") -> ValueError:
        """The error for an input on another device than state that holds data."""
        name = _argument_name(fn, args, kwargs, got)
        return ValueError(
            f"{name}: expected a tensor on {self.device}, where {where} (it holds data from earlier "
            f"updates), got one on {got.device}; call reset() or .to({str(got.device)!r}) first"
        )

    def _update_elsewhere(self, fn: Any, x: torch.Tensor, args: tuple, kwargs: dict) -> "Metric":
        """update() with the first tensor input ``x`` on another device than the state."""
        d = self.__dict__
        if d["_updated"]:
            raise self._device_mismatch(fn, args, kwargs, x)
        before = self._placement()
        self._place(x.device, states=True)
        d["_cache"] = None
        try:
            fn(self, *args, **kwargs)
        except BaseException:
            self._restore_placement(before)  # a rejected first batch leaves the metric where it was
            d["_updated"] = False  # (a nested wrapped update, super().update(), may have set it)
            raise
        d["_updated"] = True
        return self

    def attach(self, engine: Any, name: str, usage: Any = "epoch_wise", **kwargs: Any) -> Any:
        """Attach to a pytorch-ignite ``Engine`` as ignite's metrics do; results land in
        ``engine.state.metrics[name]``. See ``torchtally.adapters.ignite.attach`` (keyword
        options: output_transform, every, model, device); returns the driving MetricHook."""
        from .adapters.ignite import attach

        return attach(self, engine, name, usage, **kwargs)

    def clone(self) -> "Metric":
        """A deep copy (states, cached result, options); the process group is shared, not copied."""
        return copy.deepcopy(self)

    def __repr__(self) -> str:
        states = ", ".join(f"{n}:{r}" for n, (r, _) in self._specs.items())
        return f"{type(self).__name__}(states=[{states}], updated={self._updated})"


def _combine(reduce: str, values: List[torch.Tensor]) -> torch.Tensor:
    """Combine same-shaped fixed states (or cat states) the way a sync would."""
    if reduce == "cat":
        return torch.cat(values)
    out = values[0].clone()
    for v in values[1:]:
        if reduce == "sum":
            out = out + v
        elif reduce == "max":
            out = torch.maximum(out, v)
        elif reduce == "min":
            out = torch.minimum(out, v)
        elif reduce == "prod":
            out = out * v
    return out


def _canonical_device(device: Any) -> torch.device:
    """``device`` as tensors on it report theirs ("cuda" -> "cuda:<current>"), so that the
    update's device check compares like with like."""
    device = torch.device(device)
    if device.index is None and device.type not in ("cpu", "meta"):
        try:
            return torch.empty(0, device=device).device
        except (RuntimeError, AssertionError):  # no such device here: the first use will say so
            return device
    return device


def first_tensor(args: tuple, kwargs: dict) -> Optional[torch.Tensor]:
    """The first tensor among an update's arguments (positional, then keyword), or None."""
    for value in args:
        if isinstance(value, torch.Tensor):
            return value
    for value in kwargs.values():
        if isinstance(value, torch.Tensor):
            return value
    return None


def _argument_name(fn: Any, args: tuple, kwargs: dict, x: torch.Tensor) -> str:
    """The parameter name ``x`` was passed as (error messages only)."""
    for key, value in kwargs.items():
        if value is x:
            return key
    try:
        params = list(inspect.signature(fn).parameters.values())[1:]  # without self
    except (TypeError, ValueError):
        params = []
    for i, value in enumerate(args):
        if value is x:
            if i < len(params) and params[i].kind in (params[i].POSITIONAL_ONLY, params[i].POSITIONAL_OR_KEYWORD):
                return params[i].name
            return f"argument {i}"
    return "input"


def _wrap_update(fn):
    @functools.wraps(fn)
    def update(self, *args, **kwargs):
        d = self.__dict__
        x = args[0] if args else None
        if not isinstance(x, torch.Tensor):
            x = first_tensor(args, kwargs)
        if x is not None and x.device != d["device"]:
            return self._update_elsewhere(fn, x, args, kwargs)
        d["_cache"] = None
        fn(self, *args, **kwargs)
        d["_updated"] = True
        return self

    setattr(update, _WRAPPED, True)
    return update


def _wrap_compute(fn):
    @functools.wraps(fn)
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
            return d["_cache"][0]
        elif not d["_updated"]:
            raise NotComputableError(self._not_computable_message(local=True))
        else:
            result = self._compute_with(None)
        d["_cache"] = (result,)
        return result

    setattr(compute, _WRAPPED, True)
    return compute
