"""What keeps a metric right when several threads use it, when metrics of a MetricCollection
share one state, and when a caller edits a result.

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
"""
import copy
import functools
import threading
from typing import Any, Callable, Dict, List, Optional, TypeVar

import torch

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
        lock = self.__dict__["_lock"]
        lock.acquire()  # not ``with``: acquire/release cost a third as much
        try:
            return method(self, *args, **kwargs)
        finally:
            lock.release()

    return run  # type: ignore[return-value]


def locked_sharing(method: F) -> F:
    """``locked``, and afterwards (also when ``method`` raises, having put things back) the
    metrics sharing the object's state are pointed at it (``Guarded._share_my_state``)."""

    @functools.wraps(method)
    def run(self: Any, *args: Any, **kwargs: Any) -> Any:
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


class Guarded:
    """Mixin of Metric: the group of metrics sharing its state (set by a MetricCollection)."""

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
