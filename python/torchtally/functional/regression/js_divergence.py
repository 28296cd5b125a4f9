"""``jensen_shannon_divergence`` (torchmetrics.functional.regression.js_divergence's names).
Jensen-Shannon divergence (natural log) of each row of [N, d] distributions, reduced as
kl_divergence."""

from typing import Optional

from torch import Tensor

from . import batch_sums as sums
from . import update

__all__ = ["jensen_shannon_divergence"]


def jensen_shannon_divergence(
    p: Tensor, q: Tensor, log_prob: bool = False, reduction: Optional[str] = "mean"
) -> Tensor:
    """Jensen-Shannon divergence (natural log) of each row of [N, d] distributions, reduced as
    kl_divergence.

    >>> jensen_shannon_divergence(torch.tensor([[0.36, 0.48, 0.16]]), torch.tensor([[1 / 3, 1 / 3, 1 / 3]]))
    tensor(0.0225)
    """
    log_prob, reduction = sums.check_log_prob(log_prob), sums.check_reduction(reduction)
    x, y = sums.distributions(p, q)
    rows = sums.js_rows(x, y, log_prob)
    return sums.reduce_rows(rows, x.shape[0], reduction).to(update.functional_dtype(x, y))
