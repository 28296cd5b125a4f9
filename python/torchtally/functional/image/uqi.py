"""Universal Image Quality Index (torchmetrics.functional.image.universal_image_quality_index):
the product of the local correlation, luminance and contrast terms of two images under a
Gaussian window, as a map, averaged (or summed) over every map value. The map is made in float64
(torchtally.functional.image.windows.uqi_maps); the class sums it per batch."""

from typing import Optional, Sequence, Tuple

import torch
from torch import Tensor

from .pixel_inputs import refuse_non_finite
from .windows import check_kernel, check_pair, check_reduction, uqi_maps

__all__ = ["universal_image_quality_index"]

UQI_REDUCTIONS = ("elementwise_mean", "sum", "none", None)


def uqi_batch_maps(preds: Tensor, target: Tensor, kernel_size: Tuple[int, int], sigma: Tuple[float, float]) -> Tensor:
    """Checks preds and target ([N, C, H, W], one float dtype and shape) and returns their UQI
    maps, float64 [N, C, H', W']."""
    preds, target = check_pair(preds, target)
    maps = uqi_maps(preds, target, kernel_size, sigma, torch.finfo(preds.dtype).eps)
    refuse_non_finite(maps, preds=preds, target=target)
    return maps


def universal_image_quality_index(
    preds: Tensor,
    target: Tensor,
    kernel_size: Sequence[int] = (11, 11),
    sigma: Sequence[float] = (1.5, 1.5),
    reduction: Optional[str] = "elementwise_mean",
) -> Tensor:
    """Universal Image Quality Index of ``preds`` against ``target`` ([N, C, H, W], same float
    dtype): the mean ("elementwise_mean") or sum ("sum") of the UQI map, or the map itself
    [N, C, H - k0 + 1, W - k1 + 1] ("none"/None), in the inputs' dtype.

    Differences from torchmetrics: the map is computed in float64 (torchmetrics: in the inputs'
    dtype), with the inputs' machine epsilon as torchmetrics; images too small for the window
    raise ValueError naming preds, NaN or infinite pixels naming their argument; no gradient.

        >>> import torch
        >>> from torchtally.functional.image import universal_image_quality_index
        >>> preds = torch.linspace(0, 1, 2 * 16 * 16).reshape(2, 1, 16, 16)
        >>> universal_image_quality_index(preds, preds * 0.75)
        tensor(0.9214)
    """
    kernel, sig = check_kernel(kernel_size, sigma)
    how = check_reduction(reduction, UQI_REDUCTIONS)
    maps = uqi_batch_maps(preds, target, kernel, sig)
    if how == "elementwise_mean":
        return maps.mean().to(preds.dtype)
    if how == "sum":
        return maps.sum().to(preds.dtype)
    return maps.to(preds.dtype)
