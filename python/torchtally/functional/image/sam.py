"""Spectral angle mapper (SAM) and ERGAS (torchmetrics.functional.image): scores of
multi-band images [N, C, H, W], computed in float64.

SAM: per pixel, the angle between the predicted and the true C-band spectrum,
``acos(<p, t> / (|p| |t|))`` (NaN where a spectrum is all zeros, as torchmetrics), computed as
``2 atan2(|u - v|, |u + v|)`` of the unit spectra u, v, which stays accurate near 0 and pi.
ERGAS: per image, ``100 / ratio * sqrt(mean over bands of (RMSE_band / mean(target_band))^2)``.
"""

from typing import Optional, Tuple

import torch
from torch import Tensor

from ...kernels.image.spectral_angles import spectral_angles
from .pixel_inputs import (
    F64,
    ImageShapeError,
    check_reduction,
    four_dims,
    reduce_scores,
    refuse_non_finite,
    same_dtype,
    same_shape,
    tensor_of,
)

__all__ = ["spectral_angle_mapper"]

_NOTE_4D = "Expected `preds` and `target` to have BxCxHxW shape"


def band_pair(preds: object, target: object) -> Tuple[Tensor, Tensor]:
    """Checked floating preds and target of one dtype and shape [N, C, H, W]."""
    p, t = tensor_of("preds", preds, integers=False), tensor_of("target", target, integers=False)
    same_dtype(p, t)
    same_shape(p, t)
    four_dims("preds", p, note=_NOTE_4D)
    return p, t


def sam_angles(preds: object, target: object) -> Tensor:
    """The spectral angle of every pixel [N, H, W], float64 (C > 1 bands required)."""
    p, t = band_pair(preds, target)
    if p.shape[1] <= 1:
        raise ImageShapeError(
            f"preds: expected more than 1 channel (band), got {p.shape[1]} "
            "(Expected channel dimension of `preds` and `target` to be larger than 1)"
        )
    angles = torch.empty(p.shape[0], p.shape[2], p.shape[3], dtype=F64, device=p.device)
    # 2 atan2(|u - v|, |u + v|) of the unit spectra u, v: accurate near 0 and pi (where acos of
    # the cosine is not); one C pass on the CPU
    spectral_angles(angles, p, t)
    refuse_non_finite(angles, preds=p, target=t)
    return angles


def spectral_angle_mapper(preds: Tensor, target: Tensor, reduction: Optional[str] = "elementwise_mean") -> Tensor:
    """Spectral angle (radians) between predicted and true spectra of images [N, C, H, W]
    (C > 1 bands, one floating dtype): per pixel, then ``reduction`` "elementwise_mean"
    (default) or "sum" over every pixel, or "none"/None: the angles [N, H, W]. The result
    has the inputs' dtype.

    Differences from torchmetrics: float64 arithmetic and an angle formula accurate near 0
    (torchmetrics: the arccosine of a cosine rounded in the inputs' dtype, which gives up to
    5e-4 rad instead of 0 for equal float32 spectra); integer inputs raise TypeError
    (torchmetrics: a RuntimeError from the norm); NaN or infinite values and an unknown
    reduction raise ValueError at once.

        >>> import torch
        >>> from torchtally.functional.image import spectral_angle_mapper
        >>> preds = torch.tensor([[[[1.0]], [[0.0]]], [[[1.0]], [[1.0]]]])
        >>> target = torch.tensor([[[[0.0]], [[1.0]]], [[[1.0]], [[1.0]]]])
        >>> spectral_angle_mapper(preds, target, reduction="none").flatten()
        tensor([1.5708, 0.0000])
        >>> spectral_angle_mapper(preds, target)
        tensor(0.7854)
    """
    reduction = check_reduction(reduction)
    angles = sam_angles(preds, target)
    return reduce_scores(angles, reduction).to(preds.dtype)


def ergas_scores(preds: object, target: object, ratio: float) -> Tensor:
    """ERGAS of every image [N], float64."""
    p, t = band_pair(preds, target)
    n, c, h, w = p.shape
    p, t = p.to(F64).reshape(n, c, h * w), t.to(F64).reshape(n, c, h * w)
    rmse = ((p - t).square().sum(dim=2) / (h * w)).sqrt()
    relative = (rmse / t.mean(dim=2)).square()
    scores = 100.0 / ratio * (relative.sum(dim=1) / c).sqrt()
    refuse_non_finite(scores, preds=p, target=t)
    return scores
