"""``peak_signal_noise_ratio_with_blocked_effect`` (torchmetrics.functional.image.psnrb's names).
PSNR-B of grayscale images [N, 1, H, W]."""

from typing import Tuple, Union

import torch
from torch import Tensor

from .psnr import check_block_size, check_data_range, functional_dtype, psnrb_batch, psnrb_value

__all__ = ["peak_signal_noise_ratio_with_blocked_effect"]


def peak_signal_noise_ratio_with_blocked_effect(
    preds: Tensor, target: Tensor, data_range: Union[float, Tuple[float, float]], block_size: int = 8
) -> Tensor:
    """PSNR-B of grayscale images [N, 1, H, W]: PSNR with the blocking-effect factor of
    ``preds`` (block edges every ``block_size`` pixels) added to the mean squared error.
    ``data_range``: the width of the value range, or a tuple (min, max) to which both inputs
    are clamped.

    Differences from torchmetrics: float64 throughout; inputs of different shapes, images
    under 2 x 2 pixels (torchmetrics: a division by zero) and a block_size that is not a
    positive int raise ValueError.

        >>> import torch
        >>> from torchtally.functional.image import peak_signal_noise_ratio_with_blocked_effect
        >>> preds = torch.linspace(0, 1, 256).reshape(1, 1, 16, 16)
        >>> target = preds.flip(-1)
        >>> peak_signal_noise_ratio_with_blocked_effect(preds, target, data_range=1.0)
        tensor(28.8366)
    """
    width, bounds = check_data_range(data_range, allow_none=False)
    assert width is not None
    sse, bef, count = psnrb_batch(preds, target, check_block_size(block_size), bounds)
    value = psnrb_value(sse, bef, torch.tensor(count, device=sse.device), width)
    return value.to(functional_dtype(preds, target, zero_dim=True))
