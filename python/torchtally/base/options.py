"""A metric's options: the keyword arguments every torchmetrics metric accepts, and which of a
metric's attributes configure what it computes (described once, compared by the sync's
fingerprint, ``merge_state`` and ``load_state_dict``: torchtally.sync.fingerprint).

torchmetrics' keyword arguments, checked as torchmetrics checks them; torchtally's Metric takes
them so that torchmetrics code runs unchanged. What each does here:

  compute_on_cpu            after each update, ``cat`` states (the ones that grow with the data)
                            are moved to the CPU; the result is computed there
  dist_sync_on_step         ``forward`` returns the batch's value synced over all ranks
                            (a collective on every call: every rank must call forward)
  process_group             the group to sync over (None: the world)
  dist_sync_fn              a torchmetrics-style gather ``fn(tensor, group=...) -> [tensor per
                            rank]``; when given, states are synced through it instead of
                            torchtally's packed collectives
  distributed_available_fn  ``fn() -> bool``: whether to sync at all (default: torch.distributed
                            is initialised with more than one rank)
  sync_on_compute           sync on ``compute()`` (default True)
  compute_with_cache        keep the result of ``compute()`` until the next update (default True)

Which attributes are options:

* ``option_names`` (a class attribute, a tuple of attribute names) when the class sets it;
* otherwise, for a Metric, every public attribute (no leading underscore) of the instance that
  holds a plain value, except states and the sync and runtime settings (``NOT_OPTIONS``): a
  Metric declares its state, so what else it holds is configuration. Plain values: None, bool,
  numbers, str, torch.dtype, enums, tuples, lists and str-keyed dicts of them, and tensors;
* for a class made distributed by the decorators (torchtally.decorators), whose unsynced
  attributes may legitimately differ per rank (ignite's contract), only the attributes that
  hold a constructor argument: named like a parameter of an ``__init__`` of the class or its
  bases, with or without leading underscores (``self._average = average``, ignite's style),
  holding a plain value other than a tensor, and not synced.
"""

import functools
import inspect
from dataclasses import dataclass
from typing import Any, Callable, Dict, FrozenSet, Iterable, Optional, Set

from ..sync.fingerprint import OptionTexts, describe_value, raise_if_different


@dataclass
class TorchmetricsOptions:
    """The torchmetrics keyword arguments of one metric (module docstring)."""

    compute_on_cpu: bool = False
    dist_sync_on_step: bool = False
    dist_sync_fn: Optional[Callable[..., Any]] = None
    distributed_available_fn: Optional[Callable[[], bool]] = None
    compute_with_cache: bool = True

    @classmethod
    def from_kwargs(cls, kwargs: Dict[str, Any]) -> "TorchmetricsOptions":
        """Take the torchmetrics options out of ``kwargs``; anything else left is an error
        (ValueError, as torchmetrics raises)."""
        options = cls()
        for name in ("compute_on_cpu", "dist_sync_on_step", "compute_with_cache"):
            if name in kwargs:
                value = kwargs.pop(name)
                if not isinstance(value, bool):
                    raise ValueError(f"Expected keyword argument `{name}` to be a `bool` but got {value!r}")
                setattr(options, name, value)
        for name in ("dist_sync_fn", "distributed_available_fn"):
            value = kwargs.pop(name, None)
            if value is not None and not callable(value):
                raise ValueError(f"Expected keyword argument `{name}` to be a callable function but got {value!r}")
            setattr(options, name, value)
        if kwargs:
            names = ", ".join(f"`{k}`" for k in sorted(kwargs))
            raise ValueError(f"Unexpected keyword arguments: {names}")
        return options


def checked_recipient_rank(recipient_rank: Any) -> Optional[int]:
    """torchtally's ``recipient_rank`` option (Metric's and MetricCollection's): None (the result
    on every rank) or a rank >= 0 of the process group (only that rank gets the result)."""
    if recipient_rank is not None and (not isinstance(recipient_rank, int) or recipient_rank < 0):
        raise ValueError(f"recipient_rank must be None or a rank >= 0, got {recipient_rank!r}")
    return recipient_rank


# Attributes that never change what a metric computes, or that the sync checks on its own.
NOT_OPTIONS = frozenset(
    {
        "training",
        "sync_on_compute",
        "process_group",
        "sync_timeout",
        "recipient_rank",
        "device",
        "compute_on_cpu",
        "dist_sync_on_step",
        "dist_sync_fn",
        "distributed_available_fn",
        "compute_with_cache",
        "validate_args",
        "state_key",
        "option_names",
    }
)


def find_options(obj: Any, exclude: Iterable[str] = (), decorated: bool = False) -> OptionTexts:
    """{name: description} of ``obj``'s options (see the module docstring): the names its class
    lists in ``option_names``; otherwise its public attributes holding plain values, or for a
    ``decorated`` class its attributes holding constructor arguments; never those in ``exclude``."""
    attributes = getattr(obj, "__dict__", {})
    listed = getattr(type(obj), "option_names", None)
    skip = NOT_OPTIONS.union(exclude)
    options: OptionTexts = {}
    if listed is not None:
        for name in listed:
            value = getattr(obj, name, None)
            text = describe_value(value)
            options[name] = text if text is not None else f"<{type(value).__name__}>"
        return options
    # type(obj): a class, hashable (mypy takes type[Any] for unhashable)
    parameters = _constructor_parameters(type(obj)) if decorated else frozenset()  # type: ignore[arg-type]
    for name, value in attributes.items():
        if name in skip or (name.lstrip("_") not in parameters if decorated else name.startswith("_")):
            continue
        text = describe_value(value, tensors=not decorated)
        if text is not None:
            options[name] = text
    return options


# ignite.metrics.Metric's own constructor arguments: how and where it runs, not what it computes.
_RUNTIME_PARAMETERS = frozenset({"self", "output_transform", "device", "skip_unrolling"})


@functools.lru_cache(maxsize=256)
def _constructor_parameters(cls: type) -> FrozenSet[str]:
    names: Set[str] = set()
    for klass in cls.__mro__:
        init = klass.__dict__.get("__init__")
        if init is None or klass is object:
            continue
        try:
            parameters = inspect.signature(init).parameters.values()
        except (TypeError, ValueError):  # a builtin without a signature
            continue
        names.update(p.name for p in parameters if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD))
    return frozenset(names - _RUNTIME_PARAMETERS - NOT_OPTIONS)


class Options:
    """Mixin of Metric: its options, described once and kept current when one is assigned."""

    @property
    def described_options(self) -> OptionTexts:
        """{option: canonical description} of this metric (see torchtally.sync.fingerprint): what
        the sync fingerprint, ``merge_state`` and ``load_state_dict`` compare. Which attributes
        are options is settled the first time this is read, at the latest just before the first
        update (an attribute an update adds later is not one); assigning an option afterwards
        updates its description, and drops the sync plan and the cached result."""
        d = self.__dict__
        options = d.get("_options")
        if options is None:
            options = d["_options"] = find_options(self, exclude=d["_specs"])
        return options

    def _option_assigned(self, name: str) -> None:
        d = self.__dict__
        options = d.get("_options")
        if options is None or name not in options:
            return
        value = getattr(self, name, None)
        text = describe_value(value)
        text = f"<{type(value).__name__}>" if text is None else text
        if text != options[name]:
            d["_options"] = {**options, name: text}  # a new dict: plans built before keep theirs
            d["_plan"], d["_cache"] = None, None
            d["_spec_version"] += 1

    def check_options_of(self, other: "Options", where: str) -> None:
        """ValueError unless ``other`` (a metric merged into this one) has the same options."""
        raise_if_different(
            type(self).__name__,
            self.described_options,
            other.described_options,
            where,
            f"the {type(other).__name__} merged in",
        )
