"""Where a metric's state lives and which dtype its results have: nn.Module's ``.to()`` /
``.cuda()`` / ``.cpu()`` (through ``_apply``), torchmetrics' ``set_dtype`` and its no-op casts, and
the moves of an update that follows its input's device (see the Metric docstring).

A mixin of Metric: it reads and writes Metric's state registry (``_specs``, ``_cat_chunks``).
It also raises the rejections of CUDA updates the device checked after the update returned,
and runs the updates whose Python value checks stay on the device (kernels.deferred_checks).
"""

import functools
import inspect
from typing import TYPE_CHECKING, Any, Callable, Dict, Iterable, List, Optional, Tuple, Union

import torch

from .. import kernels
from ..kernels import deferred_checks
from ..utilities.result_dtype import cast_result
from .interop import register_with_torchmetrics
from .lists import LIST, moved

if TYPE_CHECKING:
    from typing_extensions import Self

# nn.Module's dtype casts that torchmetrics ignores for metric state (use set_dtype).
_GUARDED_CASTS = ("Module.type", "Module.half", "Module.float", "Module.double", "Module.bfloat16")


def canonical_device(device: Any) -> torch.device:
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


def argument_name(fn: Any, args: tuple, kwargs: dict, x: Any) -> str:
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


def applied_device_and_dtype(
    fn: Callable[[torch.Tensor], torch.Tensor], dtype: torch.dtype
) -> Tuple[Optional[torch.device], torch.dtype]:
    """Where nn.Module's ``_apply(fn)`` sends tensors (None: it does not move them) and which
    dtype it gives a float tensor of ``dtype``, found by applying ``fn`` to small probes rather
    than to the metric's state (which may live on a device this process cannot allocate on).

    A probe on the CPU shows a move to another device. When it stays on the CPU, ``fn`` either
    moves to the CPU or does not move at all; a probe on "meta" tells the two apart (a move to
    the CPU cannot copy out of a meta tensor, or leaves meta)."""
    on_cpu = fn(torch.zeros((), dtype=dtype))
    if on_cpu.device.type != "cpu":
        return on_cpu.device, on_cpu.dtype
    try:
        stays = fn(torch.zeros((), dtype=dtype, device="meta")).device.type == "meta"
    except (NotImplementedError, RuntimeError):
        stays = False
    return (None if stays else torch.device("cpu")), on_cpu.dtype


class Placement:
    """Mixin of Metric: devices, result dtype and CUDA rejections (module docstring)."""

    if TYPE_CHECKING:  # Metric's, set in its __init__ (base/metric.py) and by its other mixins
        _specs: Dict[str, Tuple[str, torch.Tensor]]
        _cat_chunks: Dict[str, List[torch.Tensor]]
        device: torch.device

        @property
        def dtype(self) -> torch.dtype: ...
        def _run_update(self, fn: Callable[..., Any], args: tuple, kwargs: dict) -> Any: ...
        def _tensor_states(self) -> List[torch.Tensor]: ...
        def settle_states(self) -> None: ...
        def drop_pending(self, names: Optional[Iterable[str]] = None) -> None: ...

    def named_update(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        """The function whose parameters name update's arguments in error messages (a wrapper's
        update(*args): the wrapped metric's)."""
        return fn

    def _apply(self, fn: Callable[[torch.Tensor], torch.Tensor], *args: Any, **kwargs: Any) -> "Self":
        super()._apply(fn, *args, **kwargs)  # type: ignore[misc]  # nn.Module's, after this mixin in Metric's MRO
        register_with_torchmetrics()  # a metric made before torchmetrics was imported: Lightning moves it first
        d = self.__dict__
        device, dtype = applied_device_and_dtype(fn, d["_dtype"])
        if dtype.is_floating_point and dtype != d["_dtype"]:
            if not any(cast in getattr(fn, "__qualname__", "") for cast in _GUARDED_CASTS):
                d["_dtype"] = dtype
        if device is not None and device != d["device"]:
            self.raise_rejected_cuda_updates()
            self.place_states(device, states=True)
            d["_cache"] = None
        return self

    def set_dtype(self, dst_type: Union[str, torch.dtype]) -> "Self":
        """Set the dtype of the floating-point results (``self.dtype``); accumulators keep theirs."""
        dtype = getattr(torch, dst_type) if isinstance(dst_type, str) else dst_type
        if not isinstance(dtype, torch.dtype) or not dtype.is_floating_point:
            raise ValueError(f"set_dtype: expected a floating-point torch.dtype, got {dst_type!r}")
        self.__dict__["_dtype"] = dtype
        self.__dict__["_cache"] = None
        return self

    def in_result_dtype(self, value: torch.Tensor) -> torch.Tensor:
        """``value`` (computed in float64) in the dtype of the results, ``self.dtype``; ValueError
        where a finite value would become infinite there (utilities.result_dtype.cast_result)."""
        fix = "call set_dtype(torch.float64) before compute()"
        return cast_result(value, self.dtype, type(self).__name__, fix)

    def type(self, dst_type: Union[str, torch.dtype]) -> "Self":  # noqa: A003  (nn.Module's name)
        """Leaves the metric unchanged, as torchmetrics does; use ``set_dtype``."""
        return self

    def float(self) -> "Self":
        """Leaves the metric unchanged, as torchmetrics does; use ``set_dtype``."""
        return self

    def double(self) -> "Self":
        """Leaves the metric unchanged, as torchmetrics does; use ``set_dtype``."""
        return self

    def half(self) -> "Self":
        """Leaves the metric unchanged, as torchmetrics does; use ``set_dtype``."""
        return self

    def bfloat16(self) -> "Self":
        """Leaves the metric unchanged, as torchmetrics does; use ``set_dtype``."""
        return self

    def place_states(self, device: torch.device, states: bool) -> None:
        """Put the defaults (and with ``states`` the states) on ``device``. New objects
        throughout (a new spec dict, new block lists), so a ``placement()`` taken before
        still holds the old ones."""
        self.settle_states()
        d = self.__dict__
        d["device"] = device
        d["_specs"] = {name: (reduce, default.to(device)) for name, (reduce, default) in self._specs.items()}
        if not states:
            return
        for name, (reduce, _) in self._specs.items():
            if reduce == "cat":
                self._cat_chunks[name] = [c.to(device) for c in self._cat_chunks[name]]
            elif reduce == LIST:
                d[name] = moved(d[name], device)
            else:
                d[name] = d[name].to(device)

    def placement(self) -> Tuple[Any, ...]:
        """What ``restore_placement`` needs to undo a ``_place``: references, no copies."""
        self.settle_states()
        d = self.__dict__
        fixed = {n: d[n] for n in self._specs if n not in self._cat_chunks}
        return d["device"], d["_specs"], fixed, dict(self._cat_chunks), d["_cache"]

    def restore_placement(self, placement: Tuple[Any, ...]) -> None:
        self.drop_pending()  # kept after ``placement()`` (which settled them)
        d = self.__dict__
        d["device"], d["_specs"], fixed, chunks, d["_cache"] = placement
        d.update(fixed)
        self._cat_chunks.update(chunks)

    def device_mismatch(
        self, fn: Any, args: tuple, kwargs: dict, got: torch.Tensor, where: str = "this metric's state is"
    ) -> ValueError:
        """The error for an input on another device than state that holds data."""
        name = argument_name(self.named_update(fn), args, kwargs, got)
        return ValueError(
            f"{name}: expected a tensor on {self.device}, where {where} (it holds data from earlier "
            f"updates), got one on {got.device}; call reset() or .to({str(got.device)!r}) first"
        )

    def _update_elsewhere(self, fn: Any, x: torch.Tensor, args: tuple, kwargs: dict) -> "Self":
        """update() with the first tensor input ``x`` on another device than the state."""
        d = self.__dict__
        if d["_updated"]:
            raise self.device_mismatch(fn, args, kwargs, x)
        before = self.placement()
        self.place_states(x.device, states=True)
        d["_cache"] = None
        try:
            return self._run_update(fn, args, kwargs)
        except BaseException:
            self.restore_placement(before)  # a rejected first batch leaves the metric where it was
            d["_updated"] = False
            raise

    # -- CUDA rejections (see functional.kernels.set_cuda_checks) ----------------------

    def move_cat_states_to_cpu(self) -> None:
        """``compute_on_cpu``: after each update the cat rows (and list states, as torchmetrics'
        compute_on_cpu does) move to the CPU."""
        cpu = torch.device("cpu")
        chunks, d = self.__dict__["_cat_chunks"], self.__dict__
        for name, parts in chunks.items():
            if any(p.device != cpu for p in parts):
                chunks[name] = [p.to(cpu) for p in parts]
        for name in d["_list_reduce"]:
            d[name] = moved(d[name], cpu)

    def defers_checks(self) -> bool:
        """Whether the state's device keeps value checks on the device (``deferred_checks.DEVICE_TYPES``).
        Asked at every update, forward and compute: decided once per device object (and per
        value of DEVICE_TYPES), as ``device.type`` alone costs a fifth of the update wrapper."""
        d = self.__dict__
        kept, device, types = d.get("_defers_checks"), d["device"], deferred_checks.DEVICE_TYPES
        if kept is None or kept[0] is not device or kept[1] is not types:
            kept = d["_defers_checks"] = (device, types, device.type in types)
        return kept[2]

    def raise_rejected_cuda_updates(self) -> None:
        """The CUDA kernels check values on the device and report a rejected batch later (its
        counts already undone): before computing from the state, wait for those checks and
        raise the first rejection."""
        if self.defers_checks():
            kernels.raise_rejected_cuda_updates(self._tensor_states())

    def rejected_cuda_update(self) -> Optional[ValueError]:
        """The first rejected CUDA batch of this metric's state (waiting for its checks), as the
        exception to raise, or None. Under torch.distributed the sync announces it to every rank
        (sync_states' local_error) instead of this rank leaving the others waiting."""
        try:
            self.raise_rejected_cuda_updates()
        except ValueError as exc:
            return exc
        return None

    def raise_rejected_batch(self, held: Any) -> None:
        """forward's check on CUDA, before a batch value leaves: the batch just updated into fresh
        states, then the accumulated states ``held`` (HeldStates; a rejection deferred there
        would have stopped a plain update into them), each waiting for its checks and raising
        its first rejected update. Without it a rejected batch gives a value computed from its
        undone counts, without a word. One host synchronisation per forward on CUDA; nothing on
        other devices."""
        if not self.defers_checks():
            return
        kernels.raise_rejected_cuda_updates(self._tensor_states())
        kernels.raise_rejected_cuda_updates(
            [held.values[n] for n, (reduce, _) in self._specs.items() if reduce not in ("cat", LIST)]
        )

    def forget_rejected_cuda_updates(self) -> None:
        """A rejection not yet raised dies with the state it concerned (reset, load, deletion, a
        forward's batch states put aside): the allocator will hand that memory to other tensors."""
        if self.defers_checks():
            kernels.forget_rejected_cuda_updates(self._tensor_states())

    def update_deferring(self, fn: Callable[..., Any], args: tuple, kwargs: dict) -> None:
        """The subclass's update ``fn`` on a deferring device (kernels.deferred_checks): a finished
        rejection of an earlier batch into these states raises first (this batch does not run);
        the checks ``fn`` holds decide on the device whether its changes stay (each fixed-shape
        state becomes ``where(ok, new, before)``), and their verdict is registered against the
        states, raised later. A batch that changed a state's shape or appended rows ("cat" and
        list states) cannot be undone on the device: it waits for its verdict and raises here."""
        self.settle_states()  # the update compares the states before and after it
        d = self.__dict__
        names = [n for n, (reduce, _) in self._specs.items() if reduce not in ("cat", LIST)]
        before = [d[n] for n in names]
        deferred_checks.raise_finished(before)
        batch = deferred_checks.open_batch(
            lambda: ({n: (d[n], d[n].clone()) for n in names}, self._row_counts()),
            (type(self).__name__, d["_update_count"] + 1),
            args + tuple(kwargs.values()),
        )
        try:
            fn(self, *args, **kwargs)
        finally:
            deferred_checks.close_batch()
        if batch.snapshot is None and not batch.warnings:  # nothing deferred
            deferred_checks.follow(before, [d[n] for n in names])
            return
        ok = batch.verdict(d["device"])
        copies, rows = batch.snapshot or ({}, self._row_counts())
        if rows != self._row_counts() or any(d[n].shape != copy.shape for n, (_, copy) in copies.items()):
            if not batch.settle(deferred_checks.host_verdict(batch.payload(ok)).values()):
                self._put_back(copies, rows)
                batch.search()
            return
        replaced = {}
        for n, (state, copy) in copies.items():
            now = d[n]  # written in place: a tracker of the object the update stored (FormTracker) stays valid
            now.copy_(torch.where(ok, now, copy))
            if now is not state:
                replaced[n] = now
        if replaced:  # a rejected batch's objects hold the old values: renewed, their trackers read them again
            batch.on_reject = functools.partial(self._renew_states, replaced)
        after = [d[n] for n in names]
        deferred_checks.follow(before, after)
        deferred_checks.register(batch, ok, after)

    def _renew_states(self, objects: Dict[str, torch.Tensor]) -> None:
        """Each state still held in ``objects`` replaced by a copy (a new object)."""
        d = self.__dict__
        for n, obj in objects.items():
            if d.get(n) is obj:
                d[n] = obj.clone()

    def _row_counts(self) -> Dict[str, int]:
        """The number of blocks of each "cat" state and of items of each list state."""
        d = self.__dict__
        counts = {n: len(chunks) for n, chunks in self._cat_chunks.items()}
        counts.update({n: len(d[n]) for n, (reduce, _) in self._specs.items() if reduce == LIST})
        return counts

    def _put_back(self, copies: Dict[str, Tuple[torch.Tensor, torch.Tensor]], rows: Dict[str, int]) -> None:
        """The states as an update found them (a rejected batch that could not be undone on the device)."""
        d = self.__dict__
        for n, (before, copy) in copies.items():
            before.copy_(copy)
            d[n] = before
        for n, count in rows.items():
            if n in self._cat_chunks:
                del self._cat_chunks[n][count:]
            else:
                del d[n][count:]

    def __del__(self) -> None:
        try:
            self.forget_rejected_cuda_updates()
        except Exception:  # a half-built metric, or interpreter shutdown
            pass
