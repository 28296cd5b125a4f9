"""``ConcordanceCorrCoef`` (torchmetrics.regression.concordance's names). Lin's concordance
correlation per output ([N] or [N, D] with D = num_outputs)."""

from torch import Tensor

from ..functional.regression import compute as reg_compute
from .pearson import PearsonCorrCoef

__all__ = ["ConcordanceCorrCoef"]


class ConcordanceCorrCoef(PearsonCorrCoef):
    """Lin's concordance correlation per output ([N] or [N, D] with D = num_outputs):
    2 r s_x s_y / (s_x^2 + s_y^2 + (mean_x - mean_y)^2), with r Pearson's correlation and s^2
    the sample variances (n - 1 in the denominator, as torchmetrics).

    Computed from Pearson's co-moments state (float64, Chan-merged), so a MetricCollection
    holding both keeps it once (the same ``state_key``). NaN, with a warning, where Pearson's
    correlation is NaN (a constant column, fewer than 2 samples), as torchmetrics. Differences
    from torchmetrics: as PearsonCorrCoef's (exact co-moments; NaN/inf inputs raise ValueError).

        >>> import torch
        >>> from torchtally.regression import ConcordanceCorrCoef
        >>> preds, target = torch.tensor([2.5, 0.0, 2.0, 8.0]), torch.tensor([3.0, -0.5, 2.0, 7.0])
        >>> ConcordanceCorrCoef().update(preds, target).compute()
        tensor(0.9777)
    """

    higher_is_better = True

    def compute(self) -> Tensor:
        return reg_compute.as_result(reg_compute.concordance_from_comoments(self.comoments), self._result_dtype())
