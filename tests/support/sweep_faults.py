"""The shared list of faults of the bad-input sweep (tests/catalogue/test_bad_input_sweep.py),
applied to any valid batch: positional arguments that are tensors, lists of strings, lists of
dicts of tensors or dicts of tensors.

A fault hits one leaf: a tensor (an argument, or a value in a dict / the first dict of a list,
named by its key) or a non-tensor argument. Tensor faults: a meta tensor, an unsupported dtype,
NaN / inf / 1e300 in a float tensor, one dim more or less, a list in place of the tensor, None.
Other arguments: None, a number, one item fewer (lengths that differ), a tensor in place of
strings. ``faults(batch, names)`` yields (key, bad batch, the names a refusal may give).
"""

import copy
from typing import Any, Iterator, List, Tuple

import torch

UNSUPPORTED = (torch.float8_e4m3fn, torch.uint16, torch.uint64, torch.complex64)
LAYOUTS = ("transposed", "strided", "offset")
Path = Tuple[Any, ...]  # (argument index, then keys / list indexes down to the leaf)


def leaves(batch: Tuple[Any, ...]) -> List[Tuple[Path, Any]]:
    """(path, value) of every tensor in the batch (dicts: every value; lists of dicts: the
    first one's) and of every argument that is not a tensor."""
    found: List[Tuple[Path, Any]] = []
    for i, arg in enumerate(batch):
        found.append(((i,), arg))
        if isinstance(arg, dict):
            found += [((i, k), v) for k, v in arg.items() if isinstance(v, torch.Tensor)]
        elif isinstance(arg, list) and arg and isinstance(arg[0], dict):
            found += [((i, 0, k), v) for k, v in arg[0].items() if isinstance(v, torch.Tensor)]
    return found


def replaced(batch: Tuple[Any, ...], path: Path, value: Any) -> Tuple[Any, ...]:
    """``batch`` with the leaf at ``path`` set to ``value`` (the rest shared, containers copied)."""
    args = list(batch)
    if len(path) == 1:
        args[path[0]] = value
        return tuple(args)
    outer = copy.copy(args[path[0]])
    inner = outer
    for key in path[1:-1]:
        inner[key] = copy.copy(inner[key])
        inner = inner[key]
    inner[path[-1]] = value
    args[path[0]] = outer
    return tuple(args)


def _poke(t: torch.Tensor, value: float) -> torch.Tensor:
    t = t.clone()
    t.view(-1)[-1] = value
    return t


def _tensor_faults(t: torch.Tensor) -> Iterator[Tuple[str, Any]]:
    yield "meta", t.to("meta")
    for dtype in UNSUPPORTED:
        yield f"dtype={str(dtype).replace('torch.', '')}", t.to(dtype)
    if t.is_floating_point() and t.numel():
        yield "nan", _poke(t, float("nan"))
        yield "inf", _poke(t, float("inf"))
        yield "huge", _poke(t.double(), 1e300)
    yield "rank+1", t.unsqueeze(0)
    if t.dim():
        yield "rank-1", t[0]
    yield "list", t.tolist()
    yield "none", None


def _other_faults(value: Any) -> Iterator[Tuple[str, Any]]:
    yield "none", None
    if isinstance(value, list):
        yield "number", 5
        if value:
            yield "shorter", value[:-1]
            if isinstance(value[0], str):
                yield "tensor", torch.ones(len(value))


# faults that make two arguments disagree: an error naming either of them names the fault
_MISMATCHES = ("rank+1", "rank-1", "shorter")


def faults(batch: Tuple[Any, ...], names: Tuple[str, ...]) -> Iterator[Tuple[str, Tuple[Any, ...], Tuple[str, ...]]]:
    """(fault key "<fault>:<leaf>", bad batch, names the error may give: the argument's, or
    the dict key's) for every leaf and every fault of its kind."""
    for path, value in leaves(batch):
        arg = names[path[0]] if path[0] < len(names) else f"#{path[0]}"
        leaf = arg if len(path) == 1 else f"{arg}[{path[-1]!r}]"
        blamed = (arg,) + ((str(path[-1]),) if len(path) > 1 else ())
        made = _tensor_faults(value) if isinstance(value, torch.Tensor) else _other_faults(value)
        for fault, bad in made:
            accepted_names = tuple(names) + blamed if fault in _MISMATCHES else blamed
            bad_batch = replaced(batch, path, bad)
            if fault == "huge":  # every float tensor in float64: the value is the fault, not the dtype
                bad_batch = _all_floats_double(bad_batch, path)
            yield f"{fault}:{leaf}", bad_batch, accepted_names


def _all_floats_double(batch: Tuple[Any, ...], keep: Path) -> Tuple[Any, ...]:
    for path, value in leaves(batch):
        if path != keep and isinstance(value, torch.Tensor) and value.is_floating_point():
            batch = replaced(batch, path, value.double())
    return batch


def relaid(batch: Tuple[Any, ...], how: str) -> Tuple[Any, ...]:
    """``batch`` with every tensor leaf in another memory layout, same values."""
    from support.fuzz_batches import relayout

    for path, value in leaves(batch):
        if isinstance(value, torch.Tensor) and value.dim():
            batch = replaced(batch, path, relayout(value, how))
    return batch
