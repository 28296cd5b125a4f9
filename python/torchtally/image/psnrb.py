"""``PeakSignalNoiseRatioWithBlockedEffect`` (torchmetrics.image.psnrb's names). PSNR-B."""

from typing import TYPE_CHECKING, Any, Dict, Tuple, Union

import torch
from torch import Tensor

from ..base.metric import Metric
from ..base.state_dict import check_nonnegative
from ..functional.image import psnr as fn
from .psnr import F64

__all__ = ["PeakSignalNoiseRatioWithBlockedEffect"]


class PeakSignalNoiseRatioWithBlockedEffect(Metric):
    """PSNR-B: PSNR of grayscale images [N, 1, H, W] with the blocking-effect factor of the
    predictions (block edges every ``block_size`` pixels) added to the mean squared error.
    ``update(preds, target)``; ``data_range``: the width of the value range, or a tuple
    (min, max) to which both inputs are clamped. The factor is computed per update (per batch)
    and summed, as torchmetrics does, so the result depends on how the images are batched, but
    not on how the batches are spread over ranks. Result: float32 (the metric's dtype).

    State: ``sum_squared_error`` and ``bef`` float64, ``total`` int64, sum-reduced (24 bytes).

    Differences from torchmetrics: float64 accumulation; inputs of different shapes, images
    under 2 x 2 pixels and a block_size that is not a positive int raise ValueError; unsigned
    integer inputs give their true differences (torchmetrics subtracts them in uint8, which
    wraps around); no gradient.

        >>> import torch
        >>> from torchtally.image import PeakSignalNoiseRatioWithBlockedEffect
        >>> preds = torch.linspace(0, 1, 256).reshape(1, 1, 16, 16)
        >>> metric = PeakSignalNoiseRatioWithBlockedEffect(data_range=1.0)
        >>> metric.update(preds, preds.flip(-1)).compute()
        tensor(28.8366)
    """

    is_differentiable = False
    higher_is_better = True
    full_state_update = False
    if TYPE_CHECKING:  # declared states, read as attributes
        sum_squared_error: Tensor
        bef: Tensor
        total: Tensor

    def __init__(self, data_range: Union[float, Tuple[float, float]], block_size: int = 8, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._width, self._bounds = fn.check_data_range(data_range, allow_none=False)
        self.data_range = data_range
        self.block_size = fn.check_block_size(block_size)
        self.add_state("sum_squared_error", torch.tensor(0.0, dtype=F64), reduce="sum")
        self.add_state("bef", torch.tensor(0.0, dtype=F64), reduce="sum")
        self.add_state("total", torch.tensor(0, dtype=torch.int64), reduce="sum")

    def update(self, preds: Tensor, target: Tensor) -> None:
        sse, bef, count = fn.psnrb_batch(preds, target, self.block_size, self._bounds)
        self.sum_squared_error = self.sum_squared_error + sse
        self.bef = self.bef + bef
        self.total = self.total + count

    def compute(self) -> Tensor:
        assert self._width is not None
        return self.in_result_dtype(fn.psnrb_value(self.sum_squared_error, self.bef, self.total, self._width))

    def check_state_invariants(self, states: Dict[str, Tensor]) -> None:
        super().check_state_invariants(states)
        check_nonnegative(states, "sum_squared_error", "bef", "total")
