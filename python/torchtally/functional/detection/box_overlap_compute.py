"""The IoU family's results from its sums (see box_overlap_update): the mean of the counted
values, and per class the mean over the rows of that label; 0 where nothing counted, as
torchmetrics."""

from typing import Dict

import torch
from torch import Tensor


def results(
    kind: str,
    total: Tensor,
    count: Tensor,
    class_rows: Tensor,
    class_sums: Tensor,
    class_metrics: bool,
    dtype: torch.dtype,
) -> Dict[str, Tensor]:
    """``{kind: mean}`` and, with ``class_metrics``, ``{f"{kind}/cl_{label}": mean}`` per label
    seen, in ascending order of label."""
    out = {kind: _mean(total, count, dtype)}
    if not class_metrics or class_rows.shape[0] == 0:
        return out
    labels, inverse = torch.unique(class_rows[:, 0], sorted=True, return_inverse=True)
    counts = torch.zeros(labels.shape[0], dtype=torch.int64, device=labels.device).index_add_(
        0, inverse, class_rows[:, 1]
    )
    sums = torch.zeros(labels.shape[0], dtype=class_sums.dtype, device=labels.device).index_add_(0, inverse, class_sums)
    for label, s, c in zip(labels.tolist(), sums, counts):
        out[f"{kind}/cl_{label}"] = _mean(s, c, dtype)
    return out


def _mean(total: Tensor, count: Tensor, dtype: torch.dtype) -> Tensor:
    value = total / count if int(count) > 0 else torch.zeros((), dtype=total.dtype, device=total.device)
    return value.to(dtype).reshape(())
