"""The one-collective sync of a small plan: its data travels in the header all_gather, and
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
from typing import Callable, Dict, List, Optional, Sequence

import torch

from .sync_plan import NUMBER_KINDS, SmallLayout, SyncPlan

_FLOAT_KIND = NUMBER_KINDS.index(torch.float64)
_BOOL_KIND = NUMBER_KINDS.index(torch.bool)


def number_word(value: torch.Tensor) -> int:
    """The int64 header word of a number state's 0-dim value: the int itself, or a float's bits."""
    if value.dtype == torch.float64:
        return struct.unpack("<q", struct.pack("<d", value.item()))[0]
    return int(value.item())


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
    step = torch.add if reduce == "sum" else torch.mul
    out = step(per_rank[0], per_rank[1])
    for row in per_rank[2:]:
        (out.add_ if reduce == "sum" else out.mul_)(row)
    return out


def reduce_numbers(plan: SyncPlan, layout: SmallLayout, table: List[List[int]], kinds: List[int],
                   devices: Sequence[torch.device], synced: List[Optional[torch.Tensor]],
                   unpacking: Callable) -> None:
    """Combine the number states from the header ``table`` (Python ints, rank order); ``kinds``
    are the agreed kinds (number_indices order)."""
    kinds_at = layout.numbers_at - len(plan.number_indices)
    for k, i in enumerate(plan.number_indices):
        agreed = kinds[k]
        with unpacking(i):
            values = [_decode(row[layout.numbers_at + k], row[kinds_at + k], agreed) for row in table]
            total = _combine_numbers(values, plan.specs[i].reduce, agreed)
            synced[i] = torch.tensor(total, dtype=NUMBER_KINDS[agreed], device=devices[i])


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
