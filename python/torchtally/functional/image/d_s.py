"""``spatial_distortion_index`` (torchmetrics.functional.image.d_s's names). Spatial distortion
index D_s of the fused image ``preds`` [N, C, H, W] given the low resolution multispectral
``ms`` [N, C, h, w] (h, w dividing H, W), the panchromatic ``pan`` [N, C, H, W] and optionally
its low resolution ``pan_lr`` [N, C, h, w] (else ``pan`` blurred by a window_size window and
resized to h x w)."""

from typing import Optional

import torch
from torch import Tensor

from .d_lambda import REDUCTIONS, check_positive_int, spatial_from_sums, spatial_sums
from .windows import check_reduction, check_window_size

__all__ = ["spatial_distortion_index"]


def spatial_distortion_index(
    preds: Tensor,
    ms: Tensor,
    pan: Tensor,
    pan_lr: Optional[Tensor] = None,
    norm_order: int = 1,
    window_size: int = 7,
    reduction: str = "elementwise_mean",
) -> Tensor:
    """Spatial distortion index D_s of the fused image ``preds`` [N, C, H, W] given the low
    resolution multispectral ``ms`` [N, C, h, w] (h, w dividing H, W), the panchromatic ``pan``
    [N, C, H, W] and optionally its low resolution ``pan_lr`` [N, C, h, w] (else ``pan`` blurred
    by a window_size window and resized to h x w): per channel ``abs(UQI(ms, pan_lr) - UQI(preds,
    pan)) ** q``, reduced over channels ("elementwise_mean", "sum"; "none": per channel), to the power
    1/q (q = ``norm_order``). In torch's default dtype.

    Differences from torchmetrics: UQI in float64; the resize needs no torchvision; no gradient.

        >>> import torch
        >>> from torchtally.functional.image import spatial_distortion_index
        >>> x = torch.arange(2 * 3 * 32 * 32.0).reshape(2, 3, 32, 32)
        >>> preds, pan = (x * 0.37).sin(), (x * 0.41).cos()
        >>> spatial_distortion_index(preds, preds[..., ::2, ::2], pan, pan_lr=pan[..., ::2, ::2])
        tensor(0.0380)
    """
    norm_order = check_positive_int("norm_order", norm_order)
    window_size = check_window_size(window_size)
    how = check_reduction(reduction, REDUCTIONS)
    sums = spatial_sums(preds, ms, pan, pan_lr, window_size)
    images = torch.tensor(float(preds.shape[0]), dtype=torch.float64)
    return spatial_from_sums(sums, images, norm_order, how).to(torch.get_default_dtype())
