"""Copy and pickle support for objects that sync over a process group (Metric and
MetricCollection): a ProcessGroup can be neither deep-copied nor pickled.

A deep copy shares the process group and the cached sync plan (immutable) with the original;
a pickle drops both, so the unpickled object syncs over the default group and builds its plan
again on first use.
"""
import copy
from typing import Any, Dict


class GroupBoundCopy:
    """Mixin: ``__deepcopy__``, ``__getstate__`` and ``__setstate__`` for the rules above.
    Subclasses add attributes to reset on pickling in ``_reset_on_pickle``."""

    _shared_on_copy = ("process_group", "_plan")
    _reset_on_pickle: Dict[str, Any] = {"process_group": None, "_plan": None}

    def __deepcopy__(self, memo: Dict[int, Any]) -> Any:
        new = type(self).__new__(type(self))
        memo[id(self)] = new
        for key, value in self.__dict__.items():
            new.__dict__[key] = value if key in self._shared_on_copy else copy.deepcopy(value, memo)
        return new

    def __getstate__(self) -> Dict[str, Any]:
        state = dict(self.__dict__)
        state.update(self._reset_on_pickle)
        return state

    def __setstate__(self, state: Dict[str, Any]) -> None:
        self.__dict__.update(state)
