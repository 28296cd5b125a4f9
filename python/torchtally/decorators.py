"""Make a plain metric class distributed by naming the attributes that hold its state.

Two spellings, same machinery (a custom ignite metric works after changing only its import):

  @all_reduced_synchronized("_num_correct", "_num_examples:SUM", "_max_err:MAX")
  class MyMetric: ...                                   # any class with a compute() method

  class MyMetric(ignite.metrics.Metric):                # ignite's own spelling
      @reinit__is_reduced
      def reset(self): ...
      @reinit__is_reduced
      def update(self, output): ...
      @sync_all_reduce("_num_correct", "_num_examples:SUM")
      def compute(self): ...

Each attribute is a tensor or a Python number, "name" or "name:OP" with OP one of SUM (the
default), MAX, MIN, PRODUCT, in upper case exactly as ignite spells them ("a:sum" is refused).
When compute() runs with torch.distributed initialised and more than one rank, all named
attributes are synced in one packed pass (a header, then one all_reduce per (dtype, op) group),
the synced values are set on the object for the duration of compute, and the local values are
put back afterwards, also when compute raises. Every call of compute syncs (as ignite does), so
every rank must call it; local state is never overwritten.

When the arguments are checked, and what is raised (ignite 0.5.5's contract for
sync_all_reduce, kept exactly; all_reduced_synchronized, torchtally's own, checks the names
and ops when the class is defined instead):

- Nothing at definition: sync_all_reduce("n:MINN") decorates without complaint. In one
  process (no sync needed) compute runs as written and nothing is checked, as in ignite: with
  a single rank every reduction is the identity, so no value can come out wrong.
- At compute, when a sync is needed, before any data moves, attribute by attribute in the
  order given: an OP that is not exactly SUM, MAX, MIN or PRODUCT -> ValueError ("Reduction
  operation is not valid ..."); a name that is not an attribute of the instance (its
  __dict__, a __slots__ slot, or a registered buffer of an nn.Module; not a class attribute
  or property, as ignite) -> ValueError ("... has no attribute named `name`."); a value that
  is neither a tensor nor a real Python number -> TypeError ("Attribute provided to
  sync_all_reduce should be a number or tensor but `name` ...").
- Beyond ignite, at the same moment: a name given twice is a ValueError (ignite reduces it
  twice and leaves the reduced value behind); an int beyond int64 is an OverflowError (ints
  sync exactly, as int64). A non-string attribute is a TypeError, "a:SUM:MAX" a ValueError,
  as in ignite but with a message that says what is wrong. A Python complex number syncs
  (SUM only), as in ignite.

A Python number may be an int on one rank and a float on another (ignite metrics reset
``self._sum = 0`` and add floats, so a rank without batches still holds the int): the ranks
agree on its kind in the header. The result is an int, exact (int64), when every rank holds an
int; a float (float64) when any rank holds a float. A bool is a number too: the result is a
bool when every rank holds a bool (SUM and MAX: any rank True; MIN and PRODUCT: all True), an
int when bools meet ints.

Options: the attributes that hold the object's constructor arguments (``self.threshold =
threshold``, or ignite's ``self._average = average``: named like a parameter of an ``__init__``
of its class or bases; plain values, not tensors; not synced), or the names its class lists in
``option_names``, are compared across ranks in the sync's header (see
torchtally.sync.fingerprint): ranks whose ``threshold`` or ``num_classes`` differ raise SyncError
naming the class, the option and both values, before any data moves. Other unsynced attributes
may differ per rank, as in ignite.

Deliberate differences from ignite: sync_all_reduce works on any object, not only ignite
Metrics (ignite raises RuntimeError otherwise); a compute that raises still gets its local
values back; reinit__is_reduced returns what the decorated method returns (ignite: None).
"""

import functools
import numbers
import types
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Set, Tuple

import torch

from .base.options import find_options
from .sync import dist
from .sync.fingerprint import OptionTexts
from .sync.plan import StateSpec, SyncPlan, number_spec
from .sync.protocol import sync_states

# ignite's reduction names, upper case only, and the sync's reduce for each.
_REDUCE_OF_OP = {"SUM": "sum", "MAX": "max", "MIN": "min", "PRODUCT": "prod"}
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1
_MISSING = object()

Attr = Tuple[str, str]  # (attribute name, reduce)


def _parse_one(spec: Any, decorator: str) -> Attr:
    """ "name" or "name:OP" -> (name, reduce). Whether the name is an attribute holding a number
    or tensor is checked against the instance, at compute (_attribute_value)."""
    if not isinstance(spec, str):
        raise TypeError(f"{decorator}: attributes are given as 'name' or 'name:OP' strings, got {spec!r}")
    name, colon, op = spec.partition(":")
    if not colon:
        op = "SUM"
    if op not in _REDUCE_OF_OP:
        raise ValueError(
            f"Reduction operation is not valid: {decorator}({spec!r}) asks for {op!r}; "
            f"expected one of {list(_REDUCE_OF_OP)}, spelt exactly so (upper case)"
        )
    return name, _REDUCE_OF_OP[op]


def _check_not_seen(name: str, seen: Set[str], decorator: str) -> None:
    if name in seen:
        raise ValueError(f"{decorator}: attribute '{name}' is named twice (it would be reduced twice)")
    seen.add(name)


def _parse(attrs: Sequence[Any], decorator: str = "sync_all_reduce") -> Tuple[Attr, ...]:
    """Every spec of ``attrs`` parsed, in order; raises for the first misspelt op, non-string or
    repeated name (all_reduced_synchronized's check at definition)."""
    parsed: List[Attr] = []
    seen: Set[str] = set()
    for spec in attrs:
        parsed.append(_parse_one(spec, decorator))
        _check_not_seen(parsed[-1][0], seen, decorator)
    return tuple(parsed)


def sync_all_reduce(
    *attrs: str, process_group: Optional[Any] = None, sync_timeout: Optional[dist.TimeoutLike] = None
) -> Callable[[Callable], Callable]:
    """Decorate ``compute`` so that it sees ``attrs`` reduced over all ranks (ignite's spelling).

    The attributes are checked each time compute syncs, as ignite does (see the module
    docstring for what raises and when); ``process_group`` and ``sync_timeout`` are torchtally's.
    """
    return _compute_decorator(attrs, process_group, dist.timeout_seconds(sync_timeout), "sync_all_reduce")


def _compute_decorator(
    attrs: Tuple[Any, ...], group: Optional[Any], timeout_s: float, decorator: str
) -> Callable[[Callable], Callable]:
    try:  # parsed once when every spec is well formed; else at each compute, in ignite's order
        parsed: Optional[Tuple[Attr, ...]] = _parse(attrs, decorator)
    except (TypeError, ValueError):
        parsed = None

    def decorate(compute: Callable) -> Callable:
        @functools.wraps(compute)
        def synced_compute(self: Any, *args: Any, **kwargs: Any) -> Any:
            if not attrs or id(self) in _syncing or not dist.needs_sync(group):
                return compute(self, *args, **kwargs)
            return _call_synced(self, compute, attrs, parsed, group, timeout_s, decorator, args, kwargs)

        synced_compute._decorated = True  # type: ignore[attr-defined]  # the mark ignite's decorators leave
        return synced_compute

    decorate._decorated = True  # type: ignore[attr-defined]
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

    Same attribute spelling and sync as ``sync_all_reduce``, but the names and ops are checked
    here, when the class is defined (a misspelt op raises ValueError at once, even in one
    process); whether each attribute exists and holds a number or tensor is checked when
    compute syncs.

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
    decorator = "all_reduced_synchronized"
    _parse(attrs, decorator)  # raises now for a misspelt op, a non-string or a name given twice
    decorate_compute = _compute_decorator(attrs, process_group, dist.timeout_seconds(sync_timeout), decorator)

    def decorate(cls: type) -> type:
        if not isinstance(cls, type):
            raise TypeError(f"all_reduced_synchronized decorates a class, got {cls!r}")
        compute = getattr(cls, "compute", None)
        if not callable(compute):
            raise TypeError(f"{cls.__name__} has no compute() method to synchronise")
        cls.compute = decorate_compute(compute)  # type: ignore[attr-defined]  # checked above: cls has one
        return cls

    return decorate


# -- the sync ----------------------------------------------------------------------------

_plans: Dict[Tuple[Any, ...], SyncPlan] = {}
_syncing: Set[int] = set()  # id() of objects whose compute is running on synced values


def _plan_for(
    specs: Tuple[StateSpec, ...],
    spec_keys: Tuple[Tuple[Any, ...], ...],
    owner: str = "",
    options: Optional[OptionTexts] = None,
) -> SyncPlan:
    """The plan of ``specs`` (cached; ``spec_keys``: their _spec_for keys, cheaper to hash)."""
    key = (spec_keys, owner, tuple((options or {}).items()))
    plan = _plans.get(key)
    if plan is None:
        if len(_plans) > 1024:
            _plans.clear()
        plan = _plans[key] = SyncPlan(specs, n_units=1, options=[(owner, options)] if options else ())
    return plan


def _attribute_value(obj: Any, name: str) -> Any:
    """The value of instance attribute ``name``, or _MISSING. Instance attributes only, as
    ignite (which looks in __dict__): a class attribute, a property or whatever __getattr__
    makes up (ignite's Metric answers any name) is not state. Slots and an nn.Module's
    registered buffers are instance attributes too (any class may use the decorators)."""
    instance_dict = getattr(obj, "__dict__", None)
    if instance_dict is not None and name in instance_dict:
        return instance_dict[name]
    for klass in type(obj).__mro__:
        found = vars(klass).get(name, _MISSING)
        if found is not _MISSING:
            if isinstance(found, types.MemberDescriptorType):  # a __slots__ slot
                return getattr(obj, name, _MISSING)
            break
    if isinstance(obj, torch.nn.Module):
        return dict(obj.named_buffers(recurse=False)).get(name, _MISSING)
    return _MISSING


def _as_state(owner: str, name: str, value: Any, decorator: str) -> Any:
    """The value to sync: a tensor as it is; a real number as a Python bool, int or float (a
    number state: its kind is agreed across ranks; an int must fit int64); a complex number as
    a 0-dim complex128 tensor."""
    if isinstance(value, torch.Tensor):
        return value.detach()
    if isinstance(value, bool):
        return value
    if isinstance(value, numbers.Integral):
        if not _INT64_MIN <= int(value) <= _INT64_MAX:
            raise OverflowError(f"{owner}.{name} = {value} does not fit in int64 and cannot be synced exactly")
        return int(value)
    if isinstance(value, numbers.Real):
        return float(value)
    if isinstance(value, numbers.Complex):  # as ignite; the plan allows SUM only
        return torch.tensor(complex(value), dtype=torch.complex128)
    raise TypeError(
        f"Attribute provided to {decorator} should be a number or tensor but `{name}` "
        f"of {owner} is a {type(value).__name__}"
    )


_specs: Dict[Tuple[Any, ...], StateSpec] = {}


def _spec_for(owner: str, name: str, reduce: str, value: Any) -> Tuple[StateSpec, Tuple[Any, ...]]:
    """The state spec of one attribute's value (cached: it is the same at every compute), and
    the cheap key it is known by."""
    is_tensor = isinstance(value, torch.Tensor)
    key = (owner, name, reduce, value.dtype, value.shape) if is_tensor else (owner, name, reduce)
    spec = _specs.get(key)
    if spec is None:
        if len(_specs) > 4096:
            _specs.clear()
        label = f"{owner}.{name}"
        spec = StateSpec(label, reduce, value.dtype, tuple(value.shape)) if is_tensor else number_spec(label, reduce)
        _specs[key] = spec
    return spec, key


def _parsed_in_order(attrs: Tuple[Any, ...], decorator: str) -> Iterator[Attr]:
    """The specs parsed one at a time, so that a bad value is found before a bad later spec."""
    seen: Set[str] = set()
    for spec in attrs:
        name, reduce = _parse_one(spec, decorator)
        _check_not_seen(name, seen, decorator)
        yield name, reduce


def _call_synced(
    self: Any,
    compute: Callable,
    attrs: Tuple[Any, ...],
    parsed: Optional[Tuple[Attr, ...]],
    group: Optional[Any],
    timeout_s: float,
    decorator: str,
    args: Tuple,
    kwargs: Dict[str, Any],
) -> Any:
    owner = type(self).__qualname__
    names: List[str] = []
    originals: List[Any] = []
    values: List[Any] = []
    specs: List[StateSpec] = []
    keys: List[Tuple[Any, ...]] = []
    # Attribute by attribute, as ignite: the op, then the name, then the value; all before any
    # data moves, so a bad attribute leaves every value as it was. The error is still announced
    # in the sync's header, so that the other ranks raise too instead of waiting for this one.
    try:
        for name, reduce in parsed if parsed is not None else _parsed_in_order(attrs, decorator):
            original = _attribute_value(self, name)
            if original is _MISSING:
                raise ValueError(
                    f"{owner} has no attribute named `{name}`. {decorator} syncs instance attributes: "
                    "set it in reset() (or __init__) before compute() runs."
                )
            value = _as_state(owner, name, original, decorator)
            spec, key = _spec_for(owner, name, reduce, value)
            names.append(name)
            originals.append(original)
            values.append(value)
            specs.append(spec)
            keys.append(key)
    except (ValueError, TypeError, OverflowError) as exc:
        sync_states(_plan_for(tuple(specs), tuple(keys)), values, group=group, timeout_s=timeout_s, local_error=exc)
        raise  # not reached: sync_states raises exc on this rank
    options = find_options(self, exclude=names, decorated=True)
    synced = sync_states(_plan_for(tuple(specs), tuple(keys), owner, options), values, group=group, timeout_s=timeout_s)
    assert synced is not None  # no recipient rank: every rank gets the result
    _syncing.add(id(self))
    try:
        for name, original, value in zip(names, originals, synced):
            # a tensor for a tensor; a Python number for a number (a complex one from its tensor)
            back_to_number = isinstance(value, torch.Tensor) and not isinstance(original, torch.Tensor)
            setattr(self, name, value.item() if back_to_number else value)
        return compute(self, *args, **kwargs)
    finally:
        for name, value in zip(names, originals):
            setattr(self, name, value)
        _syncing.discard(id(self))
