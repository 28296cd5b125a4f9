"""Reductions and a gather for writing metrics, as torchmetrics.utilities.distributed gives them:
``reduce``, ``class_reduce`` and ``gather_all_tensors``.

``gather_all_tensors`` is a plain torch.distributed gather, for a user's own code (a
``dist_sync_fn``, or a metric that gathers by hand); torchtally's metrics sync through their
packed plan instead (torchtally.sync). Differs from torchmetrics': no barrier first, and ranks
whose tensors differ in dtype or number of dims raise ValueError on every rank instead of
waiting on mismatched collectives.
"""

import hashlib
from typing import Any, List, Optional

import torch
import torch.distributed

MAX_DIMS = 16  # the dims one shape exchange carries


def reduce(x: torch.Tensor, reduction: Optional[str]) -> torch.Tensor:
    """``x`` reduced by ``reduction``: "elementwise_mean", "sum", or "none" / None (unchanged)."""
    if reduction == "elementwise_mean":
        return torch.mean(x)
    if reduction == "none" or reduction is None:
        return x
    if reduction == "sum":
        return torch.sum(x)
    raise ValueError("Reduction parameter unknown.")


def class_reduce(
    num: torch.Tensor, denom: torch.Tensor, weights: torch.Tensor, class_reduction: Optional[str] = "none"
) -> torch.Tensor:
    """``num / denom`` per class (0 where it is NaN), reduced by ``class_reduction``: "micro"
    (sums first), "macro" (plain mean), "weighted" (by ``weights``), "none" / None (per class)."""
    choices = ("micro", "macro", "weighted", "none", None)
    if class_reduction not in choices:
        raise ValueError(f"Reduction parameter {class_reduction} unknown. Choose between one of these: {choices}")
    fraction = torch.sum(num) / torch.sum(denom) if class_reduction == "micro" else num / denom
    fraction = torch.where(torch.isnan(fraction), torch.zeros_like(fraction), fraction)  # 0/0: 0
    if class_reduction == "macro":
        return torch.mean(fraction)
    if class_reduction == "weighted":
        return torch.sum(fraction * (weights.float() / torch.sum(weights)))
    return fraction


def _dtype_word(dtype: torch.dtype) -> int:
    return int.from_bytes(hashlib.blake2b(str(dtype).encode(), digest_size=7).digest(), "little")


def gather_all_tensors(result: torch.Tensor, group: Optional[Any] = None) -> List[torch.Tensor]:
    """Every rank's ``result`` in rank order, on every rank of ``group`` (default: the world).

    The tensors may differ in shape from rank to rank (not in dtype or number of dims): each is
    padded to the largest size of every dim, gathered, and cut back to its own shape. This rank's
    entry is ``result`` itself (so a gradient flows through it, as in torchmetrics)."""
    result = result.contiguous()
    world = torch.distributed.get_world_size(group)
    # One exchange of [ndim, dtype, dims...] settles the layout on every rank alike.
    ndim = result.dim()
    words = [ndim, _dtype_word(result.dtype)] + (list(result.shape) if ndim <= MAX_DIMS else [])
    local = torch.zeros(2 + MAX_DIMS, dtype=torch.int64, device=result.device)
    local[: len(words)] = torch.tensor(words, dtype=torch.int64)
    table = [torch.empty_like(local) for _ in range(world)]
    torch.distributed.all_gather(table, local, group=group)
    rows = [t.tolist() for t in table]
    if any(row[:2] != rows[0][:2] for row in rows) or rows[0][0] > MAX_DIMS:
        raise ValueError(
            "gather_all_tensors: the ranks' tensors must have one dtype and one number of dims (at most "
            f"{MAX_DIMS}); got (ndim, dtype) per rank {[(row[0], hex(row[1])) for row in rows]}"
        )
    shapes = [tuple(row[2 : 2 + ndim]) for row in rows]
    biggest = tuple(max(s[d] for s in shapes) for d in range(ndim))
    padded = result
    if tuple(result.shape) != biggest:
        padded = result.new_zeros(biggest)
        padded[tuple(slice(0, n) for n in result.shape)] = result
    out = [torch.empty_like(padded) for _ in range(world)]
    with torch.no_grad():
        torch.distributed.all_gather(out, padded.detach(), group=group)
    gathered = [t[tuple(slice(0, n) for n in shape)] for t, shape in zip(out, shapes)]
    gathered[torch.distributed.get_rank(group)] = result
    return gathered
