"""``JensenShannonDivergence`` (torchmetrics.regression.js_divergence's names). Jensen-Shannon
divergence (natural log, 0 to log 2) of each row of [N, d] distributions, reduced over rows."""

from ..functional.regression import batch_sums as sums
from ..kernels import regression as error_kinds
from .kl_divergence import Divergence

__all__ = ["JensenShannonDivergence"]


class JensenShannonDivergence(Divergence):
    """Jensen-Shannon divergence (natural log, 0 to log 2) of each row of [N, d] distributions,
    reduced over rows; ``log_prob`` and ``reduction`` as KLDivergence (and its differences
    from torchmetrics).

        >>> import torch
        >>> from torchtally.regression import JensenShannonDivergence
        >>> m = JensenShannonDivergence()
        >>> m.update(torch.tensor([[0.36, 0.48, 0.16]]), torch.tensor([[1 / 3, 1 / 3, 1 / 3]])).compute()
        tensor(0.0225)
    """

    _rows = staticmethod(sums.js_rows)
    _kind = error_kinds.JS
