"""``total_variation`` (torchmetrics.functional.image.tv's names). Total variation of images
``img`` [N, C, H, W]."""

from typing import Optional

import torch
from torch import Tensor

from .gradients import TV_REDUCTIONS, tv_result, tv_scores
from .pixel_inputs import check_reduction

__all__ = ["total_variation"]


def total_variation(img: Tensor, reduction: Optional[str] = "sum") -> Tensor:
    """Total variation of images ``img`` [N, C, H, W]: per image, the sum of the absolute
    differences of vertically and horizontally neighbouring pixels; ``reduction`` "sum"
    (default), "mean" (over the images) or "none"/None (one per image). The result has
    ``img``'s dtype (integer images: int64, and the default float dtype for "mean").

    Differences from torchmetrics: integer images summed exactly in int64 and floating ones
    in float64 (torchmetrics: in the image's dtype, which loses precision in float16); uint8
    and bool images raise TypeError (torchmetrics: uint8 differences wrap around); NaN or
    infinite pixels and integer images whose total could pass int64 raise ValueError.

        >>> import torch
        >>> from torchtally.functional.image import total_variation
        >>> img = torch.arange(8.0).reshape(2, 1, 2, 2)
        >>> total_variation(img)
        tensor(12.)
        >>> total_variation(img, reduction="none")
        tensor([6., 6.])
    """
    reduction = check_reduction(reduction, TV_REDUCTIONS)
    scores, integer = tv_scores(img)
    if not integer:
        dtype = img.dtype
    else:
        dtype = torch.get_default_dtype() if reduction == "mean" else torch.int64
    return tv_result(scores, img.shape[0], reduction, dtype)
