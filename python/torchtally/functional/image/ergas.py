"""``error_relative_global_dimensionless_synthesis`` (torchmetrics.functional.image.ergas's names).
ERGAS (relative dimensionless global error in synthesis) of images [N, C, H, W] of one floating
dtype."""

from typing import Optional

from torch import Tensor

from .pixel_inputs import check_positive, check_reduction, reduce_scores
from .sam import ergas_scores

__all__ = ["error_relative_global_dimensionless_synthesis"]


def error_relative_global_dimensionless_synthesis(
    preds: Tensor, target: Tensor, ratio: float = 4, reduction: Optional[str] = "elementwise_mean"
) -> Tensor:
    """ERGAS (relative dimensionless global error in synthesis) of images [N, C, H, W] of one
    floating dtype: per image ``100 / ratio * sqrt(mean over bands of (RMSE_band /
    mean(target_band))^2)``, with ``ratio`` the ratio of high to low resolution pixel sizes;
    ``reduction`` "elementwise_mean" (default), "sum", or "none"/None (one per image). The
    result has the inputs' dtype.

    Differences from torchmetrics: float64 arithmetic; integer inputs raise TypeError
    (torchmetrics: a RuntimeError from the mean); NaN or infinite values, ratio <= 0 and an
    unknown reduction raise ValueError at once.

        >>> import torch
        >>> from torchtally.functional.image import error_relative_global_dimensionless_synthesis
        >>> target = torch.ones(1, 2, 2, 2)
        >>> preds = target * torch.tensor([1.5, 0.5]).reshape(1, 2, 1, 1)
        >>> error_relative_global_dimensionless_synthesis(preds, target)
        tensor(12.5000)
    """
    ratio = check_positive("ratio", ratio)
    reduction = check_reduction(reduction)
    return reduce_scores(ergas_scores(preds, target, ratio), reduction).to(preds.dtype)
