"""What keeps a metric (and a MetricCollection) right when several threads use it, when metrics
of a collection share one state, when a caller edits a result, and when it is copied or pickled.

* Threads: the kernels release the GIL, so two threads updating one metric would interleave
  their read-modify-writes of the counts (and of the Python bookkeeping around them). Every
  metric holds a re-entrant lock; update, forward, compute, reset, merge_state, sync, state_dict
  and load_state_dict of one metric run one at a time. The metrics of a MetricCollection all
  hold the collection's lock, so a member updated directly and the collection updated from
  another thread are serialised too. The lock is taken once per call (re-entrant for nested
  calls); its cost is a fraction of a microsecond, next to several for the smallest update.
  A lock can be neither pickled nor deep-copied: a copy gets a new one (metrics that shared a
  lock in the original share one in the copy), an unpickled metric a fresh one.
* Shared state: metrics of a collection that share one state form a group; whatever changes
  the state through one of them (its own update, reset, merge_state, load_state_dict) is seen
  by all of them at once: the same state objects, the same update flags, and their cached
  results dropped.
* Results: ``compute()`` hands out copies of the tensors it caches (``caller_copy``), so a
  caller that edits a result in place changes neither the cache nor the state.
* Copies and pickles (``Guard``): a ProcessGroup can be neither deep-copied nor pickled, nor can
  a lock. A deep copy shares the process group and the cached sync plan (immutable) with the
  original, and gets new locks (objects that shared a lock share one new lock); a pickle drops
  all three, so the unpickled object syncs over the default group, builds its plan again on
  first use and gets a fresh lock (a MetricCollection then shares its own again).
"""

import copy
import functools
import threading
from typing import Any, Callable, Dict, TypeVar

import torch

from ..kernels.ops import compiling

F = TypeVar("F", bound=Callable[..., Any])


def new_lock() -> Any:
    return threading.RLock()


def copy_lock(lock: Any, memo: Dict[int, Any]) -> Any:
    """A new lock for a deep copy; objects sharing ``lock`` share its copy (``memo``)."""
    if lock is None:
        return new_lock()
    new = memo.get(id(lock))
    if new is None:
        new = memo[id(lock)] = new_lock()
    return new


def locked(method: F) -> F:
    """Run ``method`` holding the object's lock (``self.__dict__["_lock"]``)."""

    @functools.wraps(method)
    def run(self: Any, *args: Any, **kwargs: Any) -> Any:
        if compiling():  # dynamo cannot trace a lock; a compiled step runs in one thread
            return method(self, *args, **kwargs)
        lock = self.__dict__["_lock"]
        lock.acquire()  # not ``with``: acquire/release cost a third as much
        try:
            return method(self, *args, **kwargs)
        finally:
            lock.release()

    return run  # type: ignore[return-value]


def locked_sharing(method: F) -> F:
    """``locked``, and afterwards (also when ``method`` raises, having put things back) the
    metrics sharing the object's state are pointed at it (``States._share_my_state``)."""

    @functools.wraps(method)
    def run(self: Any, *args: Any, **kwargs: Any) -> Any:
        if compiling():  # as in ``locked``
            return method(self, *args, **kwargs)
        lock = self.__dict__["_lock"]
        lock.acquire()
        try:
            return method(self, *args, **kwargs)
        finally:
            try:
                if self.__dict__["_state_group"] is not None:
                    self._share_my_state()
            finally:
                lock.release()

    return run  # type: ignore[return-value]


def caller_copy(result: Any) -> Any:
    """``result`` with every tensor in it cloned (tensors, and tuples, lists and dicts of them,
    nested); anything else is returned as it is (numbers and strings are immutable)."""
    if isinstance(result, torch.Tensor):
        return result.clone()
    if isinstance(result, dict):
        out = copy.copy(result)  # the same kind of dict (OrderedDict, ...)
        for key, value in result.items():
            out[key] = caller_copy(value)
        return out
    if isinstance(result, list):
        return [caller_copy(v) for v in result]
    if isinstance(result, tuple):
        items = [caller_copy(v) for v in result]
        return type(result)(*items) if hasattr(result, "_fields") else type(result)(items)
    return result


class Guard:
    """Mixin of Metric and MetricCollection: ``__deepcopy__``, ``__getstate__`` and
    ``__setstate__`` for the copy and pickle rules above.
    Subclasses add attributes to reset on pickling in ``_reset_on_pickle``, and on both
    copying and pickling in ``_reset_on_copy``."""

    _shared_on_copy = ("process_group", "_plan")
    _reset_on_copy: Dict[str, Any] = {}
    _reset_on_pickle: Dict[str, Any] = {"process_group": None, "_plan": None, "_lock": None}

    def __deepcopy__(self, memo: Dict[int, Any]) -> Any:
        new = type(self).__new__(type(self))
        memo[id(self)] = new
        for key, value in self.__dict__.items():
            if key == "_lock":
                new.__dict__[key] = copy_lock(value, memo)
            elif key in self._reset_on_copy:
                new.__dict__[key] = self._reset_on_copy[key]
            else:
                new.__dict__[key] = value if key in self._shared_on_copy else copy.deepcopy(value, memo)
        return new

    def __getstate__(self) -> Dict[str, Any]:
        state = dict(self.__dict__)
        state.update(self._reset_on_pickle)
        state.update(self._reset_on_copy)
        return state

    def __setstate__(self, state: Dict[str, Any]) -> None:
        self.__dict__.update(state)
        for key, value in self._reset_on_copy.items():  # also for a pickle made before the key existed
            self.__dict__.setdefault(key, value)
        self.__dict__["_lock"] = new_lock()
