"""The edit-distance metrics' results from their int64 sums, formed in float64 and returned in
the caller's dtype. Where a total is 0 the division gives what torchmetrics' gives (NaN for
0 / 0, inf for x / 0), since the same expressions are evaluated."""

from typing import Optional

import torch
from torch import Tensor

_F64 = torch.float64


def _result(value: Tensor, dtype: torch.dtype) -> Tensor:
    return value.to(dtype).reshape(())


def error_rate(errors: Tensor, total: Tensor, dtype: torch.dtype) -> Tensor:
    """errors / total: WER and CER (total: reference tokens), MER (total: per pair the longer
    side's tokens)."""
    return _result(errors.to(_F64) / total.to(_F64), dtype)


def word_info_preserved(errors: Tensor, target_total: Tensor, preds_total: Tensor, dtype: torch.dtype) -> Tensor:
    """(e / target_total) * (e / preds_total), e = the sum over pairs of (distance - the longer
    side's words), as torchmetrics (-e is its count of hits)."""
    e = errors.to(_F64)
    return _result((e / target_total.to(_F64)) * (e / preds_total.to(_F64)), dtype)


def word_info_lost(errors: Tensor, target_total: Tensor, preds_total: Tensor, dtype: torch.dtype) -> Tensor:
    """1 - word_info_preserved."""
    e = errors.to(_F64)
    return _result(1 - (e / target_total.to(_F64)) * (e / preds_total.to(_F64)), dtype)


def edit_distance_result(scores: Tensor, num_elements: Tensor, reduction: Optional[str], dtype: torch.dtype) -> Tensor:
    """EditDistance's result. reduction "mean": the sum / the number of pairs (NaN over none),
    in ``dtype``; "sum": the int64 sum; None or "none": ``scores``, the int32 [N] distances
    (over none: torchmetrics' int32 0)."""
    if reduction is None or reduction == "none":
        return scores if scores.numel() else torch.tensor(0, dtype=torch.int32)
    if reduction == "sum":  # int64
        return scores.reshape(())
    return _result(scores.to(_F64) / num_elements.to(_F64), dtype)


def check_reduction(reduction: Optional[str]) -> Optional[str]:
    """``reduction``: "mean", "sum", "none" or None (a ValueError otherwise)."""
    if reduction not in (None, "mean", "sum", "none"):
        raise ValueError(f"reduction: expected one of (None, 'mean', 'sum', 'none'), got {reduction!r}")
    return reduction
