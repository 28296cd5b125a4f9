"""Which keyword arguments a metric's ``update`` takes: what a MetricCollection passes each of its
metrics of the keyword arguments it received (as torchmetrics' ``_filter_kwargs``), read once
per class from the signature of its ``update``."""

import inspect
from typing import Any, Callable, Dict, FrozenSet, NamedTuple, Optional

KwargsFilter = Callable[[Dict[str, Any]], Dict[str, Any]]


class UpdateKeywords(NamedTuple):
    """The keywords an ``update`` names, and whether it also takes ``**kwargs`` (None: its
    signature cannot be read, so it is taken to accept anything)."""

    names: FrozenSet[str]
    takes_any: Optional[bool]


def update_keywords(update: Callable[..., Any]) -> UpdateKeywords:
    try:
        params = inspect.signature(update).parameters.values()
    except (TypeError, ValueError):
        return UpdateKeywords(frozenset(), None)
    names = frozenset(p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY))
    return UpdateKeywords(names, any(p.kind == p.VAR_KEYWORD for p in params))


def all_kwargs(kwargs: Dict[str, Any]) -> Dict[str, Any]:
    return kwargs


def kwargs_filter(update: Callable[..., Any]) -> KwargsFilter:
    """A function keeping the keyword arguments ``update`` accepts by name (all of them when it
    takes ``**kwargs``)."""
    keywords = update_keywords(update)
    if keywords.takes_any is not False:
        return all_kwargs

    def accepted(kwargs: Dict[str, Any]) -> Dict[str, Any]:
        return {k: v for k, v in kwargs.items() if k in keywords.names}

    return accepted
