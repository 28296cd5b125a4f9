"""``KendallRankCorrCoef`` (torchmetrics.regression.kendall's names). Kendall's rank correlation
tau per output ([N] or [N, D] with D = num_outputs)."""

from typing import Any, Optional, Tuple, Union

from torch import Tensor

from ..functional.regression import ranks
from .spearman import RankPairs

__all__ = ["KendallRankCorrCoef"]


class KendallRankCorrCoef(RankPairs):
    """Kendall's rank correlation tau per output ([N] or [N, D] with D = num_outputs).

    ``variant``: "a" ((C - D) / (C + D) over concordant C and discordant D pairs, as
    torchmetrics), "b" (default; ties in preds and target corrected, scipy.stats.kendalltau's)
    or "c" (Stuart's, for tables). ``t_test=True`` also returns the p-value of the asymptotic
    test of tau = 0 against ``alternative`` ("two-sided", "less" or "greater"): ``(tau, p)``.
    Ties as scipy. State: every (preds, target) pair, as SpearmanCorrCoef (shared with it in a
    MetricCollection). compute is O(N log N) per output (torchmetrics: every pair compared,
    O(N^2)). Over no samples: a ValueError, as torchmetrics; an undefined tau (a constant
    column) is NaN, with a warning. Differences from torchmetrics: in this module's docstring.

        >>> import torch
        >>> from torchtally.regression import KendallRankCorrCoef
        >>> preds, target = torch.tensor([2.5, 0.0, 2.0, 8.0]), torch.tensor([3.0, -0.5, 2.0, 7.0])
        >>> KendallRankCorrCoef().update(preds, target).compute()
        tensor(1.)
        >>> m = KendallRankCorrCoef(t_test=True)
        >>> m.update(torch.tensor([1.0, 2.0, 3.0, 4.0]), torch.tensor([1.0, 3.0, 2.0, 4.0])).compute()
        (tensor(0.6667), tensor(0.1742))
    """

    higher_is_better = None
    full_state_update = True

    def __init__(
        self,
        variant: str = "b",
        t_test: bool = False,
        alternative: Optional[str] = "two-sided",
        num_outputs: int = 1,
        **kwargs: Any,
    ) -> None:
        super().__init__(num_outputs, **kwargs)
        self.variant = ranks.check_variant(variant)
        self.t_test = t_test
        self.alternative = ranks.check_t_test(t_test, alternative)  # None without a test

    def compute(self) -> Union[Tensor, Tuple[Tensor, Tensor]]:
        return ranks.kendall_result(self._all_pairs(), self.variant, self.alternative, self.dtype)
