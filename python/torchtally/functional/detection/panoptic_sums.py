"""Panoptic quality: the categories, the input checks, the per-batch sums and the results.

State (per category, in torchmetrics' order: the things sorted by id, then the stuffs sorted by
id): ``iou_sum`` float64, the IoU summed over matched segments, and ``true_positives``,
``false_positives``, ``false_negatives`` int64 counts; all sum-reduced, filled by the panoptic
kernel (csrc/API.md, "Panoptic segment matching"). For modified PQ a stuff's ``iou_sum`` sums
the IoU of every overlap of a predicted and a true segment, and its ``true_positives`` counts
its true segments (so its SQ is modified PQ's mean IoU and its RQ is 1).

Inputs: integer maps ``[B, *spatial, 2]`` of (category id, instance id) per point. A point whose
category is neither a thing nor a stuff is void (always in target; in preds only with
``allow_unknown_preds_category``, else a ValueError naming preds); a stuff's instance id is
ignored. Segments are matched within one image.
"""

import math
import warnings
from collections.abc import Collection
from typing import Dict, List, Optional, Set, Tuple

import torch
from torch import Tensor

from ... import kernels

__all__: List[str] = []

_MAP_DTYPES = (torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64)
THING, STUFF, MODIFIED_STUFF = 0, 1, 2  # the kinds of the kernel's category table


def _category_set(name: str, values: object) -> Set[int]:
    if isinstance(values, (str, bytes)) or not isinstance(values, Collection):
        raise TypeError(
            f"Expected argument `{name}` to contain `int` categories: a collection of ids, got {type(values).__name__}"
        )
    for v in values:
        if not isinstance(v, int) or isinstance(v, bool):
            raise TypeError(f"Expected argument `{name}` to contain `int` categories, got {v!r} in {values!r}")
        if not -(2**63) <= v < 2**63:
            raise ValueError(f"{name}: expected int64 category ids, got {v!r}")
    parsed = set(values)
    if len(parsed) < len(values):
        warnings.warn(f"{name}: duplicate categories were removed", UserWarning, stacklevel=4)
    return parsed


def parse_categories(things: object, stuffs: object) -> Tuple[Set[int], Set[int]]:
    """things and stuffs as sets of ints, disjoint and not both empty (torchmetrics' rules)."""
    thing_set, stuff_set = _category_set("things", things), _category_set("stuffs", stuffs)
    common = thing_set & stuff_set
    if common:
        raise ValueError(
            f"Expected arguments `things` and `stuffs` to have distinct keys, got {sorted(common)} in both"
        )
    if not thing_set | stuff_set:
        raise ValueError("At least one of `things` and `stuffs` must be non-empty: got no category")
    return thing_set, stuff_set


def void_color(things: Set[int], stuffs: Set[int]) -> Tuple[int, int]:
    """torchmetrics' (category, instance) for void points: a category beyond every known one."""
    return 1 + max([0, *things, *stuffs]), 0


def continuous_ids(things: Set[int], stuffs: Set[int]) -> Dict[int, int]:
    """Category id -> state slot: the things sorted, then the stuffs sorted."""
    return {c: i for i, c in enumerate(sorted(things) + sorted(stuffs))}


def category_table(things: Set[int], stuffs: Set[int], modified: bool) -> Tensor:
    """int64 [C, 2]: (category id, kind) of each state slot, the kernel's ``categories``."""
    stuff_kind = MODIFIED_STUFF if modified else STUFF
    rows = [(c, THING) for c in sorted(things)] + [(c, stuff_kind) for c in sorted(stuffs)]
    return torch.tensor(rows, dtype=torch.int64)


def _panoptic_map(name: str, x: object) -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}: expected a tensor, got {type(x).__name__}")
    if x.dtype not in _MAP_DTYPES:
        raise TypeError(
            f"{name}: expected an integer tensor (uint8, int8, int16, int32, int64) of (category, instance) "
            f"pairs, got {x.dtype}"
        )
    if x.is_meta:
        raise ValueError(f"{name}: expected a tensor holding values, got a meta tensor")
    if x.dim() < 3 or x.shape[-1] != 2:
        raise ValueError(
            f"{name}: expected shape [B, *spatial, 2] (at least one spatial dim; the last holds "
            f"(category, instance)), got {list(x.shape)}"
        )
    return x


def flatten_maps(preds: object, target: object) -> Tuple[Tensor, Tensor]:
    """preds and target checked and viewed as [B, N, 2], N the points of an image."""
    p, t = _panoptic_map("preds", preds), _panoptic_map("target", target)
    if t.shape != p.shape:
        raise ValueError(f"target: expected the shape of preds {list(p.shape)}, got {list(t.shape)}")
    if t.device != p.device:
        raise ValueError(f"target: expected a tensor on {p.device} (the device of preds), got {t.device}")
    b, n = p.shape[0], math.prod(p.shape[1:-1])
    return p.reshape(b, n, 2), t.reshape(b, n, 2)


def panoptic_update(
    states: Tuple[Tensor, Tensor, Tensor, Tensor],
    preds: object,
    target: object,
    table: Tensor,
    allow_unknown_preds_category: bool,
) -> None:
    """Add one batch to (iou_sum, true_positives, false_positives, false_negatives); unchanged on error."""
    p, t = flatten_maps(preds, target)
    if table.device != states[0].device:
        table = table.to(states[0].device)
    kernels.panoptic_update(*states, p, t, table, bool(allow_unknown_preds_category))


def panoptic_result(
    iou_sum: Tensor,
    true_positives: Tensor,
    false_positives: Tensor,
    false_negatives: Tensor,
    return_sq_and_rq: bool = False,
    return_per_class: bool = False,
) -> Tensor:
    """PQ (float64) from the sums: per category SQ = iou_sum / tp, RQ = tp / (tp + fp/2 + fn/2),
    PQ = SQ * RQ (0 where undefined); averaged over the categories with tp + fp + fn > 0 (NaN when
    there is none). Shapes: [] ; [3] (pq, sq, rq) ; [1, C] per class ; [C, 3] per class with SQ, RQ."""
    tp = true_positives.double()
    denominator = tp + 0.5 * false_positives.double() + 0.5 * false_negatives.double()
    zero = torch.zeros((), dtype=torch.float64, device=tp.device)
    sq = torch.where(tp > 0, iou_sum / tp.clamp(min=1), zero)
    rq = torch.where(denominator > 0, tp / denominator.clamp(min=0.5), zero)
    pq = sq * rq
    if return_per_class:
        return torch.stack((pq, sq, rq), dim=-1) if return_sq_and_rq else pq.view(1, -1)
    seen = denominator > 0
    if return_sq_and_rq:
        return torch.stack((pq[seen].mean(), sq[seen].mean(), rq[seen].mean()))
    return pq[seen].mean()


def new_states(num_categories: int, device: Optional[torch.device] = None) -> Tuple[Tensor, Tensor, Tensor, Tensor]:
    """Zeroed (iou_sum, true_positives, false_positives, false_negatives)."""
    iou = torch.zeros(num_categories, dtype=torch.float64, device=device)
    tp, fp, fn = (torch.zeros(num_categories, dtype=torch.int64, device=device) for _ in range(3))
    return iou, tp, fp, fn
