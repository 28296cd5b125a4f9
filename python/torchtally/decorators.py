"""Make a plain metric class distributed by naming the attributes that hold its state.

Two spellings, same machinery (DESIGN.md §4):

  @all_reduced_synchronized("_num_correct", "_num_examples:SUM", "_max_err:MAX")
  class MyMetric: ...                                   # any class with a compute() method

  class MyMetric(ignite.metrics.Metric):                # ignite's own spelling
      @reinit__is_reduced
      def reset(self): ...
      @reinit__is_reduced
      def update(self, output): ...
      @sync_all_reduce("_num_correct", "_num_examples:SUM")
      def compute(self): ...

Each attribute is a tensor or a Python number, "name" or "name:OP" with OP in SUM (default),
MAX, MIN, PRODUCT. When compute() runs with torch.distributed initialised and more than one
rank, all named attributes are synced in one packed pass (a header, then one all_reduce per
(dtype, op) group), the synced values are set on the object for the duration of compute, and
the local values are put back afterwards, also when compute raises. Every call of compute
syncs (as ignite does), so every rank must call it; local state is never overwritten.

A Python number may be an int on one rank and a float on another (ignite metrics reset
``self._sum = 0`` and add floats, so a rank without batches still holds the int): the ranks
agree on its kind in the header. The result is an int, exact (int64), when every rank holds an
int; a float (float64) when any rank holds a float. A bool is a number too: the result is a
bool when every rank holds a bool (SUM and MAX: any rank True; MIN and PRODUCT: all True), an
int when bools meet ints.
"""
import functools
import numbers
from typing import Any, Callable, Dict, List, Optional, Sequence, Set, Tuple

import torch

from . import dist
from .sync import StateSpec, SyncPlan, number_spec, sync_states

_OPS = {"SUM": "sum", "MAX": "max", "MIN": "min", "PRODUCT": "prod"}
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1

Attr = Tuple[str, str]  # (attribute name, reduce)


def _parse(attrs: Sequence[str]) -> Tuple[Attr, ...]:
    parsed, seen = [], set()
    for spec in attrs:
        if not isinstance(spec, str):
            raise TypeError(f"attributes must be given as 'name' or 'name:OP' strings, got {spec!r}")
        name, _, op = spec.partition(":")
        op = (op or "SUM").strip().upper()
        name = name.strip()
        if op not in _OPS:
            raise ValueError(f"'{spec}': reduction must be one of {sorted(_OPS)}, got '{op}'")
        if not name.isidentifier():
            raise ValueError(f"'{spec}': '{name}' is not an attribute name")
        if name in seen:
            raise ValueError(f"attribute '{name}' is named twice")
        seen.add(name)
        parsed.append((name, _OPS[op]))
    return tuple(parsed)


def sync_all_reduce(
    *attrs: str, process_group: Optional[Any] = None, sync_timeout: Optional[dist.TimeoutLike] = None
) -> Callable[[Callable], Callable]:
    """Decorate ``compute`` so that it sees ``attrs`` reduced over all ranks (ignite's spelling)."""
    parsed = _parse(attrs)
    timeout_s = dist.timeout_seconds(sync_timeout)

    def decorate(compute: Callable) -> Callable:
        @functools.wraps(compute)
        def synced_compute(self: Any, *args: Any, **kwargs: Any) -> Any:
            return _call_synced(self, compute, parsed, process_group, timeout_s, args, kwargs)

        synced_compute._decorated = True  # type: ignore[attr-defined]  # ignite marks its wrappers so
        synced_compute._torchtally_sync_attrs = parsed  # type: ignore[attr-defined]
        return synced_compute

    return decorate


def reinit__is_reduced(func: Callable) -> Callable:
    """Decorate ``reset``/``update`` (ignite's spelling). Syncs are never cached and local state
    is never overwritten, so nothing needs re-arming; like ignite's decorator, it clears a
    ``_result`` attribute that some metrics cache their result in."""

    @functools.wraps(func)
    def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
        out = func(self, *args, **kwargs)
        if "_result" in getattr(self, "__dict__", {}):
            self._result = None
        return out

    wrapper._decorated = True  # type: ignore[attr-defined]
    return wrapper


def all_reduced_synchronized(
    *attrs: str, process_group: Optional[Any] = None, sync_timeout: Optional[dist.TimeoutLike] = None
) -> Callable[[type], type]:
    """Class decorator: the class's ``compute`` sees ``attrs`` reduced over all ranks.

    Example:

        >>> import torch
        >>> from torchtally import all_reduced_synchronized
        >>> @all_reduced_synchronized("correct", "seen:SUM", "worst:MAX")
        ... class Accuracy:
        ...     def __init__(self):
        ...         self.correct, self.seen, self.worst = 0, 0, 0.0
        ...     def update(self, pred, target):
        ...         self.correct += int((pred == target).sum())
        ...         self.seen += target.numel()
        ...     def compute(self):
        ...         return self.correct / self.seen
        >>> acc = Accuracy()
        >>> acc.update(torch.tensor([1, 2, 3]), torch.tensor([1, 2, 0]))
        >>> round(acc.compute(), 4)  # one process: no sync, plain compute
        0.6667
    """
    decorate_compute = sync_all_reduce(*attrs, process_group=process_group, sync_timeout=sync_timeout)

    def decorate(cls: type) -> type:
        if not isinstance(cls, type):
            raise TypeError(f"all_reduced_synchronized decorates a class, got {cls!r}")
        compute = getattr(cls, "compute", None)
        if not callable(compute):
            raise TypeError(f"{cls.__name__} has no compute() method to synchronise")
        setattr(cls, "compute", decorate_compute(compute))
        return cls

    return decorate


# -- the sync ----------------------------------------------------------------------------

_plans: Dict[Tuple[StateSpec, ...], SyncPlan] = {}
_syncing: Set[int] = set()  # id() of objects whose compute is running on synced values


def _plan_for(specs: Tuple[StateSpec, ...]) -> SyncPlan:
    plan = _plans.get(specs)
    if plan is None:
        if len(_plans) > 1024:
            _plans.clear()
        plan = _plans[specs] = SyncPlan(specs, n_units=1)
    return plan


def _as_tensor(owner: str, name: str, value: Any) -> torch.Tensor:
    """The tensor to sync: the value itself, or a 0-dim bool/int64/float64 tensor for a number."""
    if isinstance(value, torch.Tensor):
        return value.detach()
    if isinstance(value, bool):
        return torch.tensor(value, dtype=torch.bool)
    if isinstance(value, numbers.Integral):
        if not _INT64_MIN <= int(value) <= _INT64_MAX:
            raise OverflowError(f"{owner}.{name} = {value} does not fit in int64 and cannot be synced exactly")
        return torch.tensor(int(value), dtype=torch.int64)
    if isinstance(value, numbers.Real):
        return torch.tensor(float(value), dtype=torch.float64)
    raise TypeError(f"{owner}.{name} must be a tensor or a Python number to be synced, got {type(value).__name__}")


def _call_synced(
    self: Any,
    compute: Callable,
    attrs: Tuple[Attr, ...],
    group: Optional[Any],
    timeout_s: float,
    args: Tuple,
    kwargs: Dict[str, Any],
) -> Any:
    if id(self) in _syncing or not attrs or not dist.needs_sync(group):
        return compute(self, *args, **kwargs)
    owner = type(self).__qualname__
    originals: List[Any] = []
    tensors, specs = [], []
    for name, reduce in attrs:
        try:
            value = getattr(self, name)
        except AttributeError:
            raise AttributeError(f"{owner} has no attribute '{name}' to sync (was reset() called?)") from None
        tensor = _as_tensor(owner, name, value)
        originals.append(value)
        tensors.append(tensor)
        if isinstance(value, torch.Tensor):
            specs.append(StateSpec(f"{owner}.{name}", reduce, tensor.dtype, tuple(tensor.shape)))
        else:  # declared as "a number", whatever kind this rank holds: the ranks agree on the kind
            specs.append(number_spec(f"{owner}.{name}", reduce))
    synced = sync_states(_plan_for(tuple(specs)), tensors, group=group, timeout_s=timeout_s)
    assert synced is not None  # no recipient rank: every rank gets the result
    _syncing.add(id(self))
    try:
        for (name, _), spec, value in zip(attrs, specs, synced):
            setattr(self, name, value.item() if spec.number else value)
        return compute(self, *args, **kwargs)
    finally:
        for (name, _), value in zip(attrs, originals):
            setattr(self, name, value)
        _syncing.discard(id(self))
