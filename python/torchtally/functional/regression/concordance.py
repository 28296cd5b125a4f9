"""``concordance_corrcoef`` (torchmetrics.functional.regression.concordance's names). Lin's
concordance correlation per column of [N] or [N, D] inputs."""

import torch
from torch import Tensor

from . import compute, update

__all__ = ["concordance_corrcoef"]


def concordance_corrcoef(preds: Tensor, target: Tensor) -> Tensor:
    """Lin's concordance correlation per column of [N] or [N, D] inputs: always [D] ([1] for
    1-D inputs, as torchmetrics); NaN for a constant column. Computed from the co-moments
    Pearson keeps (float64, Chan-merged).

    >>> concordance_corrcoef(torch.tensor([2.5, 0.0, 2.0, 8.0]), torch.tensor([3.0, -0.5, 2.0, 7.0]))
    tensor([0.9777])
    """
    d = preds.shape[1] if isinstance(preds, Tensor) and preds.dim() == 2 else 1
    p, t = update.pearson(preds, target, d)
    state = torch.zeros(d, 6, dtype=torch.float64, device=p.device)
    update.comoments_update(state, p, t)
    dtype = update.functional_dtype(p, p) if preds.dim() == 1 else update.functional_dtype(p, t)
    return compute.concordance_from_comoments(state).to(dtype)
