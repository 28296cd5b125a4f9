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

from typing import Optional, Tuple, Union

import torch
from torch import Tensor

from . import ensemble, ranks, update

__all__ = ["continuous_ranked_probability_score", "kendall_rank_corrcoef", "spearman_corrcoef"]

_F64 = torch.float64


def _pairs(preds: Tensor, target: Tensor) -> Tuple[Tensor, int]:
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
    pairs, dims = _pairs(preds, target)
    rho = ranks.spearman(pairs).to(torch.get_default_dtype())
    return rho.reshape(()) if dims == 1 else rho


def kendall_rank_corrcoef(
    preds: Tensor, target: Tensor, variant: str = "b", t_test: bool = False, alternative: Optional[str] = "two-sided"
) -> Union[Tensor, Tuple[Tensor, Tensor]]:
    """Kendall's tau per column of [N] or [N, D] inputs (a single output as a 0-d tensor);
    ``variant`` "a" ((C - D) / (C + D), as torchmetrics), "b" or "c" (scipy.stats.kendalltau's);
    with ``t_test=True`` also the asymptotic p-value against ``alternative`` ("two-sided",
    "less", "greater"). O(N log N) per column (torchmetrics compares every pair). Results in
    torch's default dtype, but tau-c in the inputs' promoted float dtype, as torchmetrics.

    >>> kendall_rank_corrcoef(torch.tensor([1.0, 2.0, 3.0, 4.0]), torch.tensor([1.0, 3.0, 2.0, 4.0]), t_test=True)
    (tensor(0.6667), tensor(0.1742))
    """
    variant = ranks.check_variant(variant)
    test = ranks.check_t_test(t_test, alternative)
    pairs, _ = _pairs(preds, target)
    ranks.require_samples(pairs, "kendall_rank_corrcoef")
    default = torch.get_default_dtype()
    # torchmetrics' tau-c follows the inputs' float dtype (float16 inputs: float16); the others,
    # and the p-value, are in the default dtype
    dtype = update.functional_dtype(preds, target) if variant == "c" else default
    return ranks.kendall_result(pairs, variant, test, dtype, default)


def continuous_ranked_probability_score(preds: Tensor, target: Tensor) -> Tensor:
    """Mean CRPS of ensemble forecasts ``preds`` [N, M] (M >= 2 members) for targets [N]
    (see ensemble.py); NaN for N = 0.

    >>> continuous_ranked_probability_score(torch.tensor([[0.0, 1.0, 2.0], [1.0, 1.0, 3.0]]), torch.tensor([1.0, 0.0]))
    tensor(0.7222)
    """
    scores = ensemble.crps_per_sample(preds, target)
    return scores.mean().to(update.functional_dtype(preds, target))
