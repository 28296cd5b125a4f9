"""Which metrics of a MetricCollection share one state (its compute groups), and the checks of
the collection's naming arguments."""
from typing import Any, Dict, List, Mapping, Optional, Tuple, Union

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
