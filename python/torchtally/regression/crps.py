"""``ContinuousRankedProbabilityScore`` (torchmetrics.regression.crps's names). Mean continuous
ranked probability score of ensemble forecasts."""

from typing import TYPE_CHECKING, Any, Dict

import torch
from torch import Tensor

from ..base.metric import Metric
from ..base.state_dict import check_nonnegative
from ..functional.regression import compute as reg_compute
from ..functional.regression import ensemble
from .spearman import F64

__all__ = ["ContinuousRankedProbabilityScore"]


class ContinuousRankedProbabilityScore(Metric):
    """Mean continuous ranked probability score of ensemble forecasts: ``preds`` [N, M] (M >= 2
    members per sample), ``target`` [N]. Per sample ``mean_i abs(x_i - y) - sum_ij abs(x_i - x_j)
    / (2 M^2)``, from the sorted members (O(M log M), no M x M matrix).

    State: a float64 sum of the scores and an int64 sample count ("sum" states, one all_reduce
    to sync). NaN over no samples (0 / 0, as torchmetrics). Differences from torchmetrics:
    float64 throughout (torchmetrics: the input's dtype); NaN/inf inputs raise ValueError.

        >>> import torch
        >>> from torchtally.regression import ContinuousRankedProbabilityScore
        >>> m = ContinuousRankedProbabilityScore()
        >>> m.update(torch.tensor([[0.0, 1.0, 2.0], [1.0, 1.0, 3.0]]), torch.tensor([1.0, 0.0])).compute()
        tensor(0.7222)
    """

    is_differentiable = False
    higher_is_better = False
    full_state_update = False
    if TYPE_CHECKING:  # states declared with add_state (read and assigned as attributes)
        score_sum: Tensor
        num_samples: Tensor

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.add_state("score_sum", torch.tensor(0.0, dtype=F64), reduce="sum")
        self.add_state("num_samples", torch.tensor(0, dtype=torch.int64), reduce="sum")

    def update(self, preds: Tensor, target: Tensor) -> None:
        total, count = ensemble.crps_sum(preds, target, self.device)
        self.score_sum += total
        self.num_samples += count

    def compute(self) -> Tensor:
        return reg_compute.mean_of(self.score_sum, self.num_samples, self.dtype)

    def check_state_invariants(self, states: Dict[str, Tensor]) -> None:
        super().check_state_invariants(states)
        check_nonnegative(states, "num_samples")
