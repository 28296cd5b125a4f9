"""A MetricCollection's members: its keys (the mapping protocol over its metrics, and results
renamed as the user sees them: prefix, postfix, dict results flattened), which members share
one state (its compute groups), and the checks of the collection's naming arguments."""

from typing import TYPE_CHECKING, Any, Dict, Iterable, Iterator, List, Mapping, Optional, Tuple, Union

import torch

from .metric import Metric

ComputeGroups = Union[bool, List[List[str]]]


def check_affix(value: Optional[str], name: str) -> Optional[str]:
    if value is None or isinstance(value, str):
        return value
    raise ValueError(f"Expected input `{name}` to be a string, but got {type(value)}")


def check_compute_groups(value: Any) -> ComputeGroups:
    if isinstance(value, bool):
        return value
    if isinstance(value, (list, tuple)) and all(
        isinstance(g, (list, tuple)) and g and all(isinstance(k, str) for k in g) for g in value
    ):
        return [list(g) for g in value]
    raise ValueError(f"compute_groups: expected True, False or a list of lists of metric keys, got {value!r}")


def state_layout(metric: Metric) -> List[Tuple[str, str, torch.dtype, Tuple[int, ...]]]:
    """What two metrics must agree on to share state: names, reduces, dtypes, shapes."""
    return [(name, metric.state_reduce(name), v.dtype, tuple(v.shape)) for name, v in _defaults(metric).items()]


def _defaults(metric: Metric) -> Dict[str, torch.Tensor]:
    return {name: metric.state_default(name) for name in metric.state_names}


def share_states(metrics: Mapping[str, Metric], compute_groups: ComputeGroups) -> Dict[str, str]:
    """Map every metric key to the key of the metric that owns its state.

    True: metrics with equal non-None ``state_key`` share (the first of them owns); False:
    nobody shares; explicit groups: each group shares its first member's state, and a group
    whose members declare different states or different ``state_key``s is refused (sharing
    them would compute one metric from another's data)."""
    if compute_groups is False:
        return {name: name for name in metrics}
    if compute_groups is True:
        return _share_by_state_key(metrics)
    owner_of = {name: name for name in metrics}
    for group in compute_groups:
        for key in group:
            if key not in metrics:
                raise ValueError(
                    f"Input {key} in `compute_groups` argument does not match a metric in the collection. "
                    f"Please make sure that {compute_groups} matches {list(metrics)}"
                )
        owner = group[0]
        for key in group[1:]:
            _check_can_share(metrics, owner, key)
            owner_of[key] = owner
    return owner_of


def _share_by_state_key(metrics: Mapping[str, Metric]) -> Dict[str, str]:
    owner_of: Dict[str, str] = {}
    owner_by_key: Dict[Any, str] = {}
    for name, metric in metrics.items():
        key = metric.state_key
        if key is None:
            owner_of[name] = name
            continue
        try:
            owner = owner_by_key.setdefault(key, name)
        except TypeError as exc:
            raise TypeError(f"metrics['{name}'].state_key must be hashable, got {key!r}") from exc
        if owner != name:
            _check_can_share(metrics, owner, name)
        owner_of[name] = owner
    return owner_of


def _check_can_share(metrics: Mapping[str, Metric], owner: str, name: str) -> None:
    a, b = metrics[owner], metrics[name]
    if state_layout(a) != state_layout(b):
        raise ValueError(
            f"metrics '{owner}' and '{name}' cannot share state: they declare different states "
            f"({state_layout(a)} vs {state_layout(b)})"
        )
    if a.state_key is not None and b.state_key is not None and a.state_key != b.state_key:
        raise ValueError(
            f"metrics '{owner}' and '{name}' cannot share state: their state options differ "
            f"({a.state_key!r} vs {b.state_key!r}), so one would be computed from data counted for the other"
        )


class Members:
    """Mixin of MetricCollection: the mapping protocol and the renamed results."""

    if TYPE_CHECKING:  # MetricCollection's (base/collection.py)
        prefix: Optional[str]
        postfix: Optional[str]
        _owner_of: Dict[str, str]

        @property
        def _metrics(self) -> Dict[str, Metric]: ...

    def __getitem__(self, key: str, copy_state: bool = True) -> Metric:
        if self.prefix and key.startswith(self.prefix):
            key = key[len(self.prefix) :]
        if self.postfix and key.endswith(self.postfix):
            key = key[: len(key) - len(self.postfix)]
        return self._metrics[key]

    def __contains__(self, key: object) -> bool:
        return key in self._metrics

    def __iter__(self) -> Iterator[str]:
        return iter(self.keys())

    def __len__(self) -> int:
        return len(self._metrics)

    def keys(self, keep_base: bool = False) -> Iterable[str]:
        """The metric keys; with prefix and postfix unless ``keep_base``."""
        if keep_base or (not self.prefix and not self.postfix):
            return self._metrics.keys()
        return [self._set_name(k) for k in self._metrics]

    def items(self, keep_base: bool = False, copy_state: bool = True) -> Iterable[Tuple[str, Metric]]:
        """(key, metric) pairs. Shared states stay shared whatever ``copy_state`` says: a metric
        read from the collection sees its group's state."""
        if keep_base or (not self.prefix and not self.postfix):
            return self._metrics.items()
        return [(self._set_name(k), m) for k, m in self._metrics.items()]

    def values(self, copy_state: bool = True) -> Iterable[Metric]:
        return self._metrics.values()

    def __repr__(self) -> str:
        shared = {n: o for n, o in self._owner_of.items() if n != o}
        affixes = "".join(f", {a}={getattr(self, a)!r}" for a in ("prefix", "postfix") if getattr(self, a))
        return f"MetricCollection({list(self._metrics)}{affixes}, shared={shared})"

    def _renamed(self, results: Dict[str, Any]) -> Dict[str, Any]:
        """Results keyed as the user sees them: a dict result is flattened into its own keys
        (prefixed with its metric's key where two would collide); prefix and postfix added."""
        if not self.prefix and not self.postfix and not any(isinstance(r, dict) for r in results.values()):
            return results  # the keys as they are, in the caller's own dict (every step, per-step usages)
        flat: Dict[str, Any] = {}
        dict_keys = [k for r in results.values() if isinstance(r, dict) for k in r]
        collide = len(dict_keys) != len(set(dict_keys))
        for name, value in results.items():
            if isinstance(value, dict):
                for key, inner in value.items():
                    flat[f"{name}_{key}" if collide else key] = inner
            else:
                flat[name] = value
        if not self.prefix and not self.postfix:
            return flat
        return {self._set_name(k): v for k, v in flat.items()}

    def _set_name(self, base: str) -> str:
        return f"{self.prefix or ''}{base}{self.postfix or ''}"
