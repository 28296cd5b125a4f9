"""``relative_average_spectral_error`` (torchmetrics.functional.image.rase's names). RASE of
``preds`` against ``target`` ([N, C, H, W], same float dtype), in the inputs' dtype."""

import torch
from torch import Tensor

from .rmse_sw import rase_from_sums, rase_sums
from .windows import check_window_size

__all__ = ["relative_average_spectral_error"]


def relative_average_spectral_error(preds: Tensor, target: Tensor, window_size: int = 8) -> Tensor:
    """RASE of ``preds`` against ``target`` ([N, C, H, W], same float dtype), in the inputs'
    dtype: 100 / mu * sqrt(mean over channels of the squared mean windowed RMSE), averaged
    inside a border of round(window_size / 2) pixels, where mu is the mean over channels of the
    windowed target mean divided by window_size^2 (torchmetrics' scaling).

    Differences from torchmetrics: float64 throughout (torchmetrics: the inputs' dtype); no
    gradient.

        >>> import torch
        >>> from torchtally.functional.image import relative_average_spectral_error
        >>> target = torch.linspace(1, 2, 2 * 16 * 16).reshape(2, 1, 16, 16)
        >>> relative_average_spectral_error(target * 1.01, target, window_size=4)
        tensor(16.0047)
    """
    window_size = check_window_size(window_size)
    rmse_sum, target_sum = rase_sums(preds, target, window_size)
    images = torch.tensor(float(preds.shape[0]), dtype=torch.float64)
    return rase_from_sums(rmse_sum, target_sum, images, window_size).to(preds.dtype)
