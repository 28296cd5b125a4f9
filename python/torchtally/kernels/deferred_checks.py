"""Value checks of the torch-op metrics (regression, aggregation) whose verdict stays on the device.

The C kernels check a CUDA batch on the device and report later (csrc/cuda/pending.h); this
module gives the metrics whose update is made of torch ops the same contract, in Python, so that
a CUDA update in "deferred" mode (kernels.set_cuda_checks) never waits for the GPU:

* a check computes a 0-d device bool ``ok`` (every input finite, every domain rule kept) and
  hands it to ``hold`` with a ``search``: the immediate path's own search of the inputs, which
  raises its ValueError (argument, first bad element). It runs only when the verdict is bad;
* Metric's update (base/placement.py, ``update_deferring``) opens a ``Batch`` around the
  subclass's update. At the first ``hold`` the batch copies the metric's fixed-shape states;
  after the update every state becomes ``where(ok, new, copy)``, so a bad batch leaves the state
  exactly as it was, and the host never learns the verdict on the way;
* the verdict is copied to pinned host memory (non_blocking) and a CUDA event recorded after
  the copy; the ``PendingCheck`` is registered against the state spans (device, first byte,
  bytes: the C registry's keys). ``raise_finished`` (at the next update into those states) looks
  only at checks whose event has finished (``query()``, never a wait) and raises a bad one's
  ValueError before the update runs; ``raise_all`` (compute, sync, .to(), forward) waits for
  them; ``forget`` drops them (reset, load).

A pending check keeps a reference to its batch's inputs until its verdict is read, so that the
error can name the first bad element. If the caller changed them in place meanwhile and the
search finds nothing, the error says that the batch held a NaN, inf or out-of-domain value.

A NaN warning (nan_strategy="warn") travels with the verdict as a count and is given when the
count is read: at the next update (if it has reached the host) or at compute, naming the update.
A batch that appended rows to a "cat" or list state, or changed a state's shape (a first batch),
cannot be undone on the device: base/placement.py waits for its verdict and raises at the call.

Outside a metric update (a functional form) and off CUDA (or in "immediate" mode) nothing is
deferred: ``deferring`` is False and the callers check on the host, as before. ``defers`` is the
one predicate for the device and mode and ``DEVICE_TYPES`` the devices whose updates open a
batch: the tests replace both to run this path on CPU tensors, where ``host_verdict`` (the one
place a verdict leaves the device) gives the CPU stand-in.
"""

import threading
import warnings
from typing import Any, Callable, Iterable, List, Optional, Set, Tuple

import torch
from torch import Tensor

# Device types whose metrics run their updates inside a Batch (the tests add "cpu").
DEVICE_TYPES: Tuple[str, ...] = ("cuda",)
# Beyond this many unread checks, the oldest is waited for (the host ran far ahead of the GPU).
MAX_PENDING = 1024

Span = Tuple[str, int, int]  # (device, first byte, bytes)
Search = Callable[[], object]  # raises; what it returns is not used

_deferred_mode = True  # kernels.set_cuda_checks keeps it in step


class _Local(threading.local):
    batch: Optional["Batch"] = None  # a class default: no AttributeError (slow) to read it unset


_local = _Local()
_pending: List["PendingCheck"] = []
# Re-entrant: a metric's __del__ (run by the garbage collector at any allocation, also while a
# thread holds this lock) forgets its checks.
_lock = threading.RLock()


def set_deferred_mode(deferred: bool) -> None:
    """Called by kernels.set_cuda_checks: "deferred" (True) or "immediate" (False)."""
    global _deferred_mode
    _deferred_mode = deferred


def defers(t: Tensor) -> bool:
    """Whether a check of the CUDA tensor ``t`` may stay on the device (deferred mode)."""
    return _deferred_mode and t.is_cuda


def deferring(t: Tensor) -> bool:
    """Whether a check about ``t`` is deferred now: inside a metric update, on a deferring device."""
    return _local.batch is not None and defers(t)


def all_true(conditions: Iterable[Tensor], device: torch.device) -> Tensor:
    """The 0-d bool AND of 0-d bool device tensors (True for none)."""
    ok = torch.ones((), dtype=torch.bool, device=device)
    for c in conditions:
        ok = ok & c
    return ok


def finite(*tensors: Tensor) -> Tensor:
    """0-d device bool: every element of the floating ``tensors`` is finite."""
    return all_true((torch.isfinite(t).all() for t in tensors if t.is_floating_point()), tensors[0].device)


class Batch:
    """What one metric update deferred: its checks (``hold``), its NaN warnings (``hold_warning``),
    the state copy taken at the first check, and which update it was (for the warnings)."""

    __slots__ = ("checks", "warnings", "take_snapshot", "snapshot", "label", "inputs", "on_reject")

    def __init__(self, take_snapshot: Callable[[], Any], label: Tuple[str, int], inputs: Tuple[Any, ...]) -> None:
        self.checks: List[Tuple[Tensor, Search, str]] = []
        self.warnings: List[Tuple[Tensor, Callable[[int], str]]] = []
        self.take_snapshot = take_snapshot
        self.snapshot: Any = None
        self.label = label
        self.inputs = inputs
        self.on_reject: Optional[Callable[[], None]] = None  # run on the host when its error is raised

    def verdict(self, device: torch.device) -> Tensor:
        """0-d device bool: every check held passed."""
        return all_true((ok for ok, _, _ in self.checks), device)

    def payload(self, ok: Tensor) -> Tensor:
        """int64 [1 + warnings]: the verdict, then each warning's count: one copy to the host."""
        return torch.stack([ok.to(torch.int64)] + [count.to(torch.int64) for count, _ in self.warnings])

    def settle(self, values: List[int]) -> bool:
        """Warn for the counts of ``values`` (a read payload) that are not 0; return the verdict."""
        for (_, words), count in zip(self.warnings, values[1:]):
            if count:
                name, number = self.label
                warnings.warn(f"{words(count)} in {name}'s update {number}", UserWarning, stacklevel=4)
        return bool(values[0])

    def search(self) -> None:
        """Run the searches in order: the first bad one raises; nothing found raises too. One
        batch, one error: the unread checks of other updates on the same inputs are dropped (a
        forward that updates twice, once into the accumulated states, once into fresh ones)."""
        _drop_same_inputs(self)
        if self.on_reject is not None:
            self.on_reject()
        for _, search, _ in self.checks:
            search()
        names = " / ".join(dict.fromkeys(what for _, _, what in self.checks))
        raise ValueError(
            f"{names}: the batch held a NaN, inf or out-of-domain value, not found again in its inputs "
            "(they were changed in place after the update, before its deferred check was read)"
        )


def open_batch(take_snapshot: Callable[[], Any], label: Tuple[str, int], inputs: Tuple[Any, ...]) -> Batch:
    """Start collecting the checks of one update (its caller closes it with ``close_batch``);
    ``label``: (metric name, update number) for the warnings; ``inputs``: the update's arguments."""
    batch = Batch(take_snapshot, label, inputs)
    _local.batch = batch
    return batch


def close_batch() -> None:
    _local.batch = None


def hold(ok: Tensor, search: Search, what: str) -> None:
    """Defer a check of the open batch: ``ok`` its 0-d device verdict, ``search`` the immediate
    path's search (raises the ValueError), ``what`` the arguments it concerns. Call it before the
    update touches any state: the first one takes the state copy that undoes a bad batch."""
    batch = _local.batch
    assert batch is not None, "hold() outside a metric update (deferring() says when)"
    if batch.snapshot is None:
        batch.snapshot = batch.take_snapshot()
    batch.checks.append((ok, search, what))


def hold_warning(count: Tensor, words: Callable[[int], str]) -> None:
    """Defer a warning of the open batch: ``count`` a 0-d device count (no warning when 0),
    ``words(count)`` its text. The batch is kept; the warning comes when its count is read."""
    batch = _local.batch
    assert batch is not None, "hold_warning() outside a metric update (deferring() says when)"
    batch.warnings.append((count, words))


# -- the payload on its way to the host ------------------------------------------------------


class _CudaVerdict:
    """A payload copied to pinned host memory, with the event that says when it got there."""

    __slots__ = ("host", "event")

    def __init__(self, payload: Tensor) -> None:
        self.host = torch.empty(payload.shape, dtype=payload.dtype, pin_memory=True)
        self.host.copy_(payload, non_blocking=True)
        self.event = torch.cuda.Event()
        self.event.record()

    def ready(self) -> bool:
        return bool(self.event.query())

    def values(self) -> List[int]:
        self.event.synchronize()
        return self.host.numpy().tolist()  # pinned memory the copy has filled: no device sync


# The stand-in's read, taken before a test can count Tensor.tolist: it plays the CUDA path's
# read of pinned memory, which is no device synchronisation.
_read_host = torch.Tensor.tolist


class _HostVerdict:
    """A CPU payload (the tests' stand-in): ready at once; read when asked."""

    __slots__ = ("payload",)

    def __init__(self, payload: Tensor) -> None:
        self.payload = payload

    def ready(self) -> bool:
        return True

    def values(self) -> List[int]:
        return _read_host(self.payload)


def host_verdict(payload: Tensor) -> Any:
    """``payload`` on its way to the host: ``ready()`` (never waits), ``values()`` (waits)."""
    return _CudaVerdict(payload) if payload.is_cuda else _HostVerdict(payload)


# -- the registry ------------------------------------------------------------------------------


class PendingCheck:
    """A batch's verdict not yet read, the searches that explain it, the state spans it concerns."""

    __slots__ = ("verdict", "batch", "spans")

    def __init__(self, verdict: Any, batch: Batch, spans: Set[Span]) -> None:
        self.verdict, self.batch, self.spans = verdict, batch, spans


def spans(states: Iterable[Any]) -> Set[Span]:
    """(device, first byte, bytes) of each non-empty tensor of ``states``."""
    return {
        (str(t.device), t.data_ptr(), t.numel() * t.element_size())
        for t in states
        if isinstance(t, Tensor) and t.numel()
    }


def _overlaps(a: Set[Span], b: Set[Span]) -> bool:
    return any(da == db and pa < pb + nb and pb < pa + na for da, pa, na in a for db, pb, nb in b)


def follow(before: List[Any], after: List[Any]) -> None:
    """The unread checks of the states ``before`` an update now concern the states ``after`` it
    (an update may replace a state object)."""
    if not _pending or all(a is b for a, b in zip(before, after)):
        return
    old, new = spans(before), spans(after)
    with _lock:
        for check in _pending:
            if _overlaps(check.spans, old):
                check.spans = (check.spans - old) | new


def register(batch: Batch, ok: Tensor, states: List[Any]) -> None:
    """Register the batch's verdict ``ok`` (and its warning counts) against ``states``."""
    check = PendingCheck(host_verdict(batch.payload(ok)), batch, spans(states))
    oldest = None
    with _lock:
        _pending.append(check)
        if len(_pending) > MAX_PENDING:
            oldest = _pending.pop(0)
    if oldest is not None and not oldest.batch.settle(oldest.verdict.values()):
        oldest.batch.search()  # its batch was undone all the same; it raises here, late


def _drop_same_inputs(batch: Batch) -> None:
    with _lock:
        for check in [c for c in _pending if c.batch is not batch and _same(c.batch.inputs, batch.inputs)]:
            _pending.remove(check)


def _same(a: Tuple[Any, ...], b: Tuple[Any, ...]) -> bool:
    return len(a) == len(b) and all(x is y for x, y in zip(a, b))


def pending() -> bool:
    """Whether any check is unread (a cheap test before looking for a state's)."""
    return bool(_pending)


def _take(states: Iterable[Any], wait: bool) -> Optional[PendingCheck]:
    """Remove the read checks concerning ``states`` (waiting for each with ``wait``, else only the
    finished ones) up to the first bad one, which is returned (removed too)."""
    if not _pending:
        return None
    keys = spans(states)
    if not keys:
        return None
    with _lock:
        mine = [c for c in _pending if _overlaps(c.spans, keys)]
    for check in mine:
        if not wait and not check.verdict.ready():
            continue
        ok = check.batch.settle(check.verdict.values())
        with _lock:
            if check in _pending:
                _pending.remove(check)
        if not ok:
            return check
    return None


def raise_finished(states: Iterable[Any]) -> None:
    """Raise the ValueError of the first finished bad check of ``states``; never waits."""
    bad = _take(states, wait=False)
    if bad is not None:
        bad.batch.search()


def raise_all(states: Iterable[Any]) -> None:
    """Wait for every check of ``states`` and raise the first bad one's ValueError."""
    bad = _take(states, wait=True)
    if bad is not None:
        bad.batch.search()


def forget(states: Iterable[Any]) -> None:
    """Drop the unread checks of ``states`` (reset, load: what they concerned is gone)."""
    if not _pending:
        return
    keys = spans(states)
    with _lock:
        for check in [c for c in _pending if _overlaps(c.spans, keys)]:
            if check in _pending:  # (a __del__ run meanwhile may have removed it)
                _pending.remove(check)


def cleaned(t: Tensor) -> Tensor:
    """``t`` for a kernel that itself refuses NaN / inf (the moments kernels): as it is, or, while
    a check about it is deferred, with those replaced by 0. Its values matter only when the
    verdict is good, and then there are none; the kernel must not raise (or, on CUDA, defer a
    second rejection of its own) for a batch the deferred check already refuses."""
    if t.is_floating_point() and deferring(t):
        return torch.nan_to_num(t, nan=0.0, posinf=0.0, neginf=0.0)
    return t
