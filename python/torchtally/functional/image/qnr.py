"""``quality_with_no_reference`` (torchmetrics.functional.image.qnr's names). Quality with No
Reference."""

from typing import Optional

import torch
from torch import Tensor

from .d_lambda import (
    REDUCTIONS,
    check_nonnegative_real,
    check_positive_int,
    qnr_from_parts,
    spatial_from_sums,
    spatial_sums,
    spectral_from_sums,
    spectral_sums,
)
from .windows import check_reduction, check_window_size

__all__ = ["quality_with_no_reference"]


def quality_with_no_reference(
    preds: Tensor,
    ms: Tensor,
    pan: Tensor,
    pan_lr: Optional[Tensor] = None,
    alpha: float = 1,
    beta: float = 1,
    norm_order: int = 1,
    window_size: int = 7,
    reduction: str = "elementwise_mean",
) -> Tensor:
    """Quality with No Reference: (1 - D_lambda(preds, ms))^alpha (1 - D_s)^beta, D_lambda with
    p = ``norm_order`` and D_s as ``spatial_distortion_index``. In torch's default dtype.

    Differences from torchmetrics: UQI in float64; the resize needs no torchvision; no gradient.

        >>> import torch
        >>> from torchtally.functional.image import quality_with_no_reference
        >>> x = torch.arange(2 * 3 * 32 * 32.0).reshape(2, 3, 32, 32)
        >>> preds, pan = (x * 0.37).sin(), (x * 0.41).cos()
        >>> quality_with_no_reference(preds, preds[..., ::2, ::2], pan, pan_lr=pan[..., ::2, ::2])
        tensor(0.8914)
    """
    alpha = check_nonnegative_real("alpha", alpha)
    beta = check_nonnegative_real("beta", beta)
    norm_order = check_positive_int("norm_order", norm_order)
    window_size = check_window_size(window_size)
    how = check_reduction(reduction, REDUCTIONS)
    spectral = spectral_sums(preds, ms, "ms")
    spatial = spatial_sums(preds, ms, pan, pan_lr, window_size)
    images = torch.tensor(float(preds.shape[0]), dtype=torch.float64)
    d_lambda = spectral_from_sums(spectral, preds.shape[1], images, norm_order, how)
    d_s = spatial_from_sums(spatial, images, norm_order, how)
    return qnr_from_parts(d_lambda, d_s, alpha, beta).to(torch.get_default_dtype())
