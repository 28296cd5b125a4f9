"""``RelativeAverageSpectralError`` (torchmetrics.image.rase's names). Relative Average Spectral
Error of ``preds`` against ``target`` ([N, C, H, W], one float dtype, one image size over all
batches), from the windowed RMSE maps and windowed target means averaged over all images (not a
mean of per-image values)."""

from typing import TYPE_CHECKING, Any, Dict, List

import torch
from torch import Tensor

from ..base.input_dtype import InputDtypeMixin
from ..base.state_dict import check_nonnegative
from ..functional.image import rmse_sw as sw_fn
from ..functional.image.shaped_sums import add_shaped, check_shaped, merge_shaped, split_shaped
from ..functional.image.windows import check_window_size
from ..functional.regression import update as reg_update
from .uqi import F64, WindowMetric, scalar

__all__ = ["RelativeAverageSpectralError"]


class RelativeAverageSpectralError(InputDtypeMixin, WindowMetric):
    """Relative Average Spectral Error of ``preds`` against ``target`` ([N, C, H, W], one float
    dtype, one image size over all batches), from the windowed RMSE maps and windowed target
    means averaged over all images (not a mean of per-image values). The result has the inputs'
    dtype (as torchmetrics).

    Differences from torchmetrics: see torchtally.image.uqi; torchmetrics
    keeps every image, this keeps 2 C H W float64 sums.

        >>> import torch
        >>> from torchtally.image import RelativeAverageSpectralError
        >>> target = torch.linspace(1, 2, 2 * 16 * 16).reshape(2, 1, 16, 16)
        >>> RelativeAverageSpectralError(window_size=4).update(target * 1.01, target).compute()
        tensor(16.0047)
    """

    higher_is_better = False
    if TYPE_CHECKING:
        window_sums: Tensor
        images: Tensor

    def __init__(self, window_size: int = 8, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.window_size = check_window_size(window_size)
        self.add_state("window_sums", torch.empty(0, dtype=F64), reduce="merge")
        self.add_state("images", scalar(torch.int64), reduce="sum")
        self._add_input_dtype()

    def update(self, preds: Tensor, target: Tensor) -> None:
        rmse_sum, target_sum = sw_fn.rase_sums(preds, target, self.window_size)
        sums = torch.cat((rmse_sum.reshape(-1), target_sum.reshape(-1)))
        self.window_sums = add_shaped(self.window_sums, rmse_sum.shape, sums, "target: image shape [C, H, W]")
        self.images = self.images + preds.shape[0]
        self._note_input_dtype(preds)

    def merge_state_values(self, name: str, values: List[Tensor]) -> Tensor:
        return merge_shaped(values, 3, "RelativeAverageSpectralError")

    def compute(self) -> Tensor:
        dtype = reg_update.promoted(self.dtype, self._input_code())
        if not self.window_sums.numel():
            return torch.tensor(float("nan"), dtype=dtype, device=self.images.device)
        shape, sums = split_shaped(self.window_sums, 3)
        rmse_sum, target_sum = sums.reshape(2, *shape)
        return sw_fn.rase_from_sums(rmse_sum, target_sum, self.images, self.window_size).to(dtype)

    def check_state_invariants(self, states: Dict[str, Tensor]) -> None:
        super().check_state_invariants(states)
        check_nonnegative(states, "images")
        self._check_input_dtype(states)
        check_shaped(states["window_sums"], 3, lambda s: 2 * s[0] * s[1] * s[2], "window_sums")
