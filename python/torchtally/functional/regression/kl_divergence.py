"""``kl_divergence`` (torchmetrics.functional.regression.kl_divergence's names). KL(p || q) of each
row of [N, d] distributions (rows scaled to sum 1 unless ``log_prob``."""

from typing import Optional

from torch import Tensor

from . import batch_sums as sums
from . import update

__all__ = ["kl_divergence"]


def kl_divergence(p: Tensor, q: Tensor, log_prob: bool = False, reduction: Optional[str] = "mean") -> Tensor:
    """KL(p || q) of each row of [N, d] distributions (rows scaled to sum 1 unless ``log_prob``:
    then p and q are log-probabilities), reduced by ``reduction``: "mean", "sum", "none"/None.

    >>> kl_divergence(torch.tensor([[0.36, 0.48, 0.16]]), torch.tensor([[1 / 3, 1 / 3, 1 / 3]]))
    tensor(0.0853)
    """
    log_prob, reduction = sums.check_log_prob(log_prob), sums.check_reduction(reduction)
    x, y = sums.distributions(p, q)
    rows = sums.kl_rows(x, y, log_prob)
    return sums.reduce_rows(rows, x.shape[0], reduction).to(update.functional_dtype(x, y))
