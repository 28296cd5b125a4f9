"""Copy and pickle support for objects that sync over a process group (Metric and
MetricCollection): a ProcessGroup can be neither deep-copied nor pickled, nor can a lock.

A deep copy shares the process group and the cached sync plan (immutable) with the original,
and gets new locks (objects that shared a lock share one new lock: torchtally.metric_guard);
a pickle drops all three, so the unpickled object syncs over the default group, builds its plan
again on first use and gets a fresh lock (a MetricCollection then shares its own again).
"""
import copy
from typing import Any, Dict

from .metric_guard import copy_lock, new_lock


class GroupBoundCopy:
    """Mixin: ``__deepcopy__``, ``__getstate__`` and ``__setstate__`` for the rules above.
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
