"""``LogCoshError`` (torchmetrics.regression.log_cosh's names). Mean of log(cosh(preds - target))."""

from typing import Any

from torch import Tensor

from ..functional.regression import batch_sums as sums
from ..functional.regression import update as reg_update
from ..kernels import regression as error_kinds
from .log_mse import MeanOfSums

__all__ = ["LogCoshError"]


class LogCoshError(MeanOfSums):
    """Mean of log(cosh(preds - target)): [N] (or [N, 1]) inputs, or [N, D] with
    ``num_outputs=D`` (one value per output).

    Differences from torchmetrics: computed as log1p(2 sinh(e/2)^2) in float64, so small
    errors keep their digits and large ones do not overflow (torchmetrics: exp(e) in the
    inputs' dtype, inf above 88 in float32); NaN/inf inputs and a 1-D input with
    ``num_outputs > 1`` raise ValueError.

        >>> import torch
        >>> from torchtally.regression import LogCoshError
        >>> LogCoshError().update(torch.tensor([3.0, 5.0, 2.5, 7.0]), torch.tensor([2.5, 5.0, 4.0, 8.0])).compute()
        tensor(0.3523)
        >>> m = LogCoshError(num_outputs=2)
        >>> m.update(torch.tensor([[3.0, 5.0], [-2.0, 2.5]]), torch.tensor([[2.5, 5.0], [0.0, 4.0]])).compute()
        tensor([0.7226, 0.4277])
    """

    def __init__(self, num_outputs: int = 1, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.num_outputs = reg_update.check_num_outputs(num_outputs)
        self._add_sums((self.num_outputs,))

    def update(self, preds: Tensor, target: Tensor) -> None:
        p, t = reg_update.pearson(preds, target, self.num_outputs, self.device)
        if not self._added(p, t, error_kinds.LOG_COSH):
            self._add(sums.log_cosh_sum(p, t), p.shape[0])
