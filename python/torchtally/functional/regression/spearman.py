"""Regression metrics that rank or sort: the functional forms of Spearman's and Kendall's rank
correlations and of the CRPS of an ensemble (one batch in, the metric out). The math is in
ranks.py and ensemble.py.

Results are float64 computations rounded once: rank correlations in torch's default dtype (as
torchmetrics'), the CRPS in the inputs' promoted float dtype (torch's default dtype for integer
inputs). Inputs are checked as the classes' (NaN or inf is a ValueError). Results carry no
gradient.

    >>> import torch
    >>> from torchtally.functional import kendall_rank_corrcoef, spearman_corrcoef
    >>> preds, target = torch.tensor([2.5, 0.0, 2.0, 8.0]), torch.tensor([3.0, -0.5, 2.0, 7.0])
    >>> spearman_corrcoef(preds, target)
    tensor(1.)
    >>> kendall_rank_corrcoef(torch.tensor([1.0, 2.0, 3.0, 4.0]), torch.tensor([1.0, 3.0, 2.0, 4.0]))
    tensor(0.6667)
"""

from typing import Tuple

import torch
from torch import Tensor

from . import ranks

__all__ = ["spearman_corrcoef"]

_F64 = torch.float64


def checked_pairs(preds: Tensor, target: Tensor) -> Tuple[Tensor, int]:
    """Checked [N] or [N, D] inputs as float64 pairs [N, 2, D] (exact for every dtype read)."""
    d = preds.shape[1] if isinstance(preds, Tensor) and preds.dim() == 2 else 1
    pairs, _ = ranks.pair_rows(preds, target, d, _F64)
    return pairs, preds.dim()


def spearman_corrcoef(preds: Tensor, target: Tensor) -> Tensor:
    """Spearman's rank correlation per column of [N] or [N, D] inputs (0-d for [N], [D] for
    [N, D]): Pearson's correlation of the average ranks, scipy.stats.spearmanr's value. NaN
    with a warning for a constant column (torchmetrics: 0, from an eps in the denominator,
    which also keeps its other results off the exact value by up to 1e-6 / variance); integer
    inputs are read too (torchmetrics: TypeError).

    >>> preds = torch.tensor([[1.0, 4.0], [2.0, 3.0], [3.0, 2.0]])
    >>> spearman_corrcoef(preds, torch.tensor([[1.0, 1.0], [3.0, 2.0], [2.0, 3.0]]))
    tensor([ 0.5000, -1.0000])
    """
    pairs, dims = checked_pairs(preds, target)
    rho = ranks.spearman(pairs).to(torch.get_default_dtype())
    return rho.reshape(()) if dims == 1 else rho
