"""Tensor helpers for writing metrics, under the names torchmetrics.utilities.data gives them:
the ``dim_zero_*`` reductions a ``compute`` applies to list states, label conversions and
``apply_to_collection``.

Differences from torchmetrics: none in the values; ``apply_to_collection`` is this project's own
(torchmetrics takes lightning_utilities'), with the same arguments and the same containers
(mappings, named tuples, sequences, dataclass instances).
"""

import copy
import dataclasses
from collections import OrderedDict, defaultdict
from typing import Any, Callable, List, Mapping, Optional, Sequence, Tuple, Type, Union

import torch

__all__ = [
    "apply_to_collection",
    "dim_zero_cat",
    "dim_zero_max",
    "dim_zero_mean",
    "dim_zero_min",
    "dim_zero_sum",
    "select_topk",
    "squeeze_if_scalar",
    "to_categorical",
    "to_onehot",
]


def dim_zero_cat(x: Union[torch.Tensor, List[torch.Tensor]]) -> torch.Tensor:
    """``x`` itself when it is a tensor (a list state after a sync), else its items concatenated
    along dim 0, a 0-dim item counting as one row. ValueError for an empty list."""
    if isinstance(x, torch.Tensor):
        return x
    items = [t.reshape(1) if t.dim() == 0 else t for t in x]
    if not items:
        raise ValueError("No samples to concatenate")
    return torch.cat(items, dim=0)


def dim_zero_sum(x: torch.Tensor) -> torch.Tensor:
    return torch.sum(x, dim=0)


def dim_zero_mean(x: torch.Tensor) -> torch.Tensor:
    return torch.mean(x, dim=0)


def dim_zero_max(x: torch.Tensor) -> torch.Tensor:
    return torch.max(x, dim=0).values


def dim_zero_min(x: torch.Tensor) -> torch.Tensor:
    return torch.min(x, dim=0).values


def to_onehot(label_tensor: torch.Tensor, num_classes: Optional[int] = None) -> torch.Tensor:
    """Labels ``[N, d1, ...]`` as one-hot ``[N, C, d1, ...]`` in the labels' dtype (C: the
    largest label + 1 when not given)."""
    if num_classes is None:
        num_classes = int(label_tensor.max().item()) + 1
    out = torch.zeros(
        (label_tensor.shape[0], num_classes, *label_tensor.shape[1:]),
        dtype=label_tensor.dtype,
        device=label_tensor.device,
    )
    return out.scatter_(1, label_tensor.long().unsqueeze(1), 1)


def select_topk(prob_tensor: torch.Tensor, topk: int = 1, dim: int = 1) -> torch.Tensor:
    """An int32 tensor of ``prob_tensor``'s shape with 1 at the ``topk`` largest entries along
    ``dim``, 0 elsewhere."""
    out = torch.zeros_like(prob_tensor, dtype=torch.int32)
    if topk == 1:
        index = prob_tensor.argmax(dim=dim, keepdim=True)
    elif prob_tensor.dtype == torch.half and prob_tensor.device.type == "cpu":  # no CPU half topk
        index = prob_tensor.argsort(dim=dim, stable=True).flip(dim).narrow(dim, 0, topk)
    else:
        index = prob_tensor.topk(topk, dim=dim).indices
    return out.scatter_(dim, index, 1)


def to_categorical(x: torch.Tensor, argmax_dim: int = 1) -> torch.Tensor:
    """Probabilities to labels: the argmax along ``argmax_dim``."""
    return torch.argmax(x, dim=argmax_dim)


def apply_to_collection(
    data: Any,
    dtype: Union[Type[Any], Tuple[Type[Any], ...]],
    function: Callable[..., Any],
    *args: Any,
    wrong_dtype: Optional[Union[Type[Any], Tuple[Type[Any], ...]]] = None,
    include_none: bool = True,
    allow_frozen: bool = False,
    **kwargs: Any,
) -> Any:
    """``function(item, *args, **kwargs)`` for every item of type ``dtype`` (and not of
    ``wrong_dtype``) in ``data``, through nested mappings, named tuples, sequences (not strings)
    and dataclass instances (a copy, its init fields set), rebuilt as the same kinds of
    containers; other items are kept. ``include_none=False`` leaves out the items whose result
    is None (a dataclass keeps its old value); a frozen dataclass raises ValueError unless
    ``allow_frozen`` (then its copy is returned unchanged)."""

    def apply(value: Any) -> Any:
        return apply_to_collection(
            value,
            dtype,
            function,
            *args,
            wrong_dtype=wrong_dtype,
            include_none=include_none,
            allow_frozen=allow_frozen,
            **kwargs,
        )

    if isinstance(data, dtype) and (wrong_dtype is None or not isinstance(data, wrong_dtype)):
        return function(data, *args, **kwargs)
    if isinstance(data, Mapping):
        items = [(k, apply(v)) for k, v in data.items()]
        items = [(k, v) for k, v in items if include_none or v is not None]
        if isinstance(data, defaultdict):
            return type(data)(data.default_factory, OrderedDict(items))
        return type(data)(OrderedDict(items))  # type: ignore[call-arg]  # a dict-like class
    if isinstance(data, tuple) and hasattr(data, "_fields"):  # a named tuple
        values = [apply(v) for v in data]
        return type(data)(*[v for v in values if include_none or v is not None])
    if isinstance(data, Sequence) and not isinstance(data, (str, bytes)):
        values = [apply(v) for v in data]
        return type(data)([v for v in values if include_none or v is not None])  # type: ignore[call-arg]
    if dataclasses.is_dataclass(data) and not isinstance(data, type):
        fields = dataclasses.fields(data)
        old = {f.name: getattr(data, f.name) for f in fields}
        result = copy.deepcopy(data, memo={id(v): v for v in old.values()})  # the fields' values are not copied
        for f in fields:
            value = apply(old[f.name]) if f.init else None
            if not f.init or (not include_none and value is None):
                value = old[f.name]
            try:
                setattr(result, f.name, value)
            except dataclasses.FrozenInstanceError:
                if allow_frozen:
                    return result
                raise ValueError(
                    "apply_to_collection: a frozen dataclass cannot be changed (allow_frozen=True)"
                ) from None
        return result
    return data


def squeeze_if_scalar(data: Any) -> Any:
    """Every one-element tensor in ``data`` (nested as ``apply_to_collection`` sees it) as a 0-dim
    tensor: what torchmetrics does to the result of a metric's ``compute``."""
    return apply_to_collection(data, torch.Tensor, lambda t: t.squeeze() if t.numel() == 1 else t)
