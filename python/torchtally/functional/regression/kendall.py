"""``kendall_rank_corrcoef`` (torchmetrics.functional.regression.kendall's names). Kendall's tau
per column of [N] or [N, D] inputs (a single output as a 0-d tensor)."""

from typing import Optional, Tuple, Union

import torch
from torch import Tensor

from . import ranks, update
from .spearman import checked_pairs

__all__ = ["kendall_rank_corrcoef"]


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
    pairs, _ = checked_pairs(preds, target)
    ranks.require_samples(pairs, "kendall_rank_corrcoef")
    default = torch.get_default_dtype()
    # torchmetrics' tau-c follows the inputs' float dtype (float16 inputs: float16); the others,
    # and the p-value, are in the default dtype
    dtype = update.functional_dtype(preds, target) if variant == "c" else default
    return ranks.kendall_result(pairs, variant, test, dtype, default)
