"""The one-collective sync of a small plan: its data travels in the header exchange, and
every rank reduces the W copies itself (layout: torchtally.sync_plan.SmallLayout; the packing
into and reading out of the header's reused buffers: torchtally.sync_header).

The reduction is exact and the same on every rank: integer sums, products, max and min are
exact in any order (int64 arithmetic wraps the same way an all_reduce does); float and complex
sums and products are taken in rank order, one rank at a time, so every rank computes the very
same operations on the very same gathered bytes and gets bit-identical results. max and min
propagate NaN. Python numbers are combined as Python numbers in the kind the ranks agreed on
(an int sum that leaves int64 raises instead of wrapping).
"""
import math
import struct
from typing import Any, Callable, Dict, List, Sequence, Union

import torch

from .sync_plan import NUMBER_KINDS, SmallLayout, SyncPlan

_FLOAT_KIND = NUMBER_KINDS.index(torch.float64)
_INT_KIND = NUMBER_KINDS.index(torch.int64)
_BOOL_KIND = NUMBER_KINDS.index(torch.bool)

# A number state's value is a Python bool, int or float, or a 0-dim tensor of a NUMBER_KINDS
# dtype; the synced value comes back in the same form (a Python number saves the four tensor
# ops of a round trip through a 0-dim tensor, at every sync of a decorated metric).
Number = Union[bool, int, float, torch.Tensor]


def number_kind(value: Number) -> int:
    """The NUMBER_KINDS index of a number state's value."""
    if isinstance(value, torch.Tensor):
        return NUMBER_KINDS.index(value.dtype)
    if isinstance(value, bool):
        return _BOOL_KIND
    return _FLOAT_KIND if isinstance(value, float) else _INT_KIND


def number_word(value: Number) -> int:
    """The int64 header word of a number state's value: the int itself, or a float's bits."""
    if isinstance(value, torch.Tensor):
        value = value.item()
    if isinstance(value, float):
        return struct.unpack("<q", struct.pack("<d", value))[0]
    return int(value)


def python_number(tensor: torch.Tensor, kind: int) -> Union[bool, int, float]:
    """A synced 0-dim (or one-element) tensor as the Python number of ``kind``."""
    value = tensor.item()
    return bool(value) if kind == _BOOL_KIND else int(value) if kind == _INT_KIND else float(value)


def combine_rows(rows: torch.Tensor, per_rank: Sequence[torch.Tensor], reduce: str) -> torch.Tensor:
    """Reduce [W, ...] rows (rank order; ``per_rank``: rows[0], rows[1], ...) by ``reduce``
    over the rank dim, into a new tensor."""
    if reduce == "max":
        return rows.amax(0)
    if reduce == "min":
        return rows.amin(0)
    if len(per_rank) > 2 and not (rows.dtype.is_floating_point or rows.dtype.is_complex):
        return rows.sum(0) if reduce == "sum" else rows.prod(0)  # exact in any order
    # Floats: one rank at a time, in rank order. (Two rows of any dtype: one elementwise op,
    # cheaper than a reduction.)
    if len(per_rank) == 1:
        return per_rank[0].clone()
    out = (torch.add if reduce == "sum" else torch.mul)(per_rank[0], per_rank[1])
    step = out.add_ if reduce == "sum" else out.mul_
    for row in per_rank[2:]:
        step(row)
    return out


def reduce_numbers(plan: SyncPlan, layout: SmallLayout, table: List[List[int]], kinds: List[int],
                   local: Sequence[Number], synced: List[Any], fail: Callable) -> None:
    """Combine the number states from the header ``table`` (Python ints, rank order) into
    ``synced``, each in the form of its ``local`` value; ``kinds`` are the agreed kinds
    (number_indices order); ``fail(i, exc)`` is the error naming state i."""
    kinds_at = layout.numbers_at - len(plan.number_indices)
    for k, i in enumerate(plan.number_indices):
        agreed = kinds[k]
        try:
            values = [_decode(row[layout.numbers_at + k], row[kinds_at + k], agreed) for row in table]
            total = _combine_numbers(values, plan.specs[i].reduce, agreed)
            mine = local[i]
            synced[i] = (torch.full((), total, dtype=NUMBER_KINDS[agreed], device=mine.device)
                         if isinstance(mine, torch.Tensor) else total)
        except Exception as exc:
            raise fail(i, exc) from exc


def _decode(word: int, kind: int, agreed: int) -> float:
    if kind == _FLOAT_KIND:
        return struct.unpack("<d", struct.pack("<q", word))[0]
    return float(word) if agreed == _FLOAT_KIND else word


_PYTHON_REDUCES: Dict[str, Callable] = {
    "sum": lambda a, b: a + b,
    "prod": lambda a, b: a * b,
    "max": max,
    "min": min,
}


def _combine_numbers(values: List, reduce: str, kind: int):
    if kind == _FLOAT_KIND and reduce in ("max", "min") and any(math.isnan(v) for v in values):
        return math.nan
    step = _PYTHON_REDUCES[reduce]
    total = values[0]
    for v in values[1:]:
        total = step(total, v)
    if kind == _BOOL_KIND:
        return bool(total)
    if kind != _FLOAT_KIND and not -(2**63) <= total < 2**63:
        raise OverflowError(f"the {reduce} over ranks, {total}, does not fit in int64")
    return total
