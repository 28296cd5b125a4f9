"""``pearson_corrcoef`` (torchmetrics.functional.regression.pearson's names). Pearson correlation
per column of [N] or [N, D] inputs (NaN for a constant column)."""

import torch
from torch import Tensor

from . import compute, update

__all__ = ["pearson_corrcoef"]


def pearson_corrcoef(preds: Tensor, target: Tensor) -> Tensor:
    """Pearson correlation per column of [N] or [N, D] inputs (NaN for a constant column).

    >>> pearson_corrcoef(torch.tensor([1.0, 2.0, 3.0]), torch.tensor([1.0, 2.0, 2.5]))
    tensor(0.9820)
    """
    d = preds.shape[1] if isinstance(preds, Tensor) and preds.dim() == 2 else 1
    p, t = update.pearson(preds, target, d)
    state = torch.zeros(d, 6, dtype=torch.float64, device=p.device)
    update.comoments_update(state, p, t)
    # torchmetrics' dtype: preds' for 1-D inputs, the promoted one for [N, D].
    dtype = update.functional_dtype(p, p) if preds.dim() == 1 else update.functional_dtype(p, t)
    return compute.as_result(compute.pearson_from_comoments(state), dtype)
