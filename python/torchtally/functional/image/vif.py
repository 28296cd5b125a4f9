"""Visual information fidelity of a batch of images (torchmetrics.functional.image's
visual_information_fidelity): per channel, over 4 scales with Gaussian windows of 17, 9, 5 and 3
(sigma = size / 5, no padding; each scale's image the previous one filtered by that scale's
window and taken at every second row and column), the information preds keeps over the
information target carries; averaged over the channels. The windowed moments come from the SSIM
moments kernel (torchtally.kernels.image.ssim), in float64.

Differences from torchmetrics: float64 moments (torchmetrics: the input's dtype, in which the
variance thresholds at 1e-10 are decided on rounded values); integer inputs raise TypeError;
NaN or infinite inputs, a target channel without variance (VIF 0/0: torchmetrics' NaN) and
sigma_n_sq <= 0 raise ValueError; no gradient.
"""

import math
import numbers
from typing import Tuple

import torch
from torch import Tensor

from ...kernels.image import ssim as image_ssim

__all__ = ["visual_information_fidelity"]

_EPS = 1e-10
_SCALES = 4


def check_sigma_n_sq(sigma_n_sq: object) -> float:
    if (
        isinstance(sigma_n_sq, bool)
        or not isinstance(sigma_n_sq, numbers.Real)
        or not (0 < float(sigma_n_sq) < math.inf)
    ):
        raise ValueError(f"sigma_n_sq: expected a positive finite number, got {sigma_n_sq!r}")
    return float(sigma_n_sq)


def check_reduction(reduction: object) -> None:
    if reduction not in ("mean", "none"):
        raise ValueError(f"reduction: expected 'mean' or 'none', got {reduction!r}")


def check_images(preds: object, target: object) -> Tuple[Tensor, Tensor]:
    """Floating [N, C, H, W] of one shape, H and W at least 41; target takes preds' dtype."""
    if not isinstance(preds, Tensor) or not isinstance(target, Tensor):
        raise TypeError(f"preds, target: expected tensors, got {type(preds).__name__} and {type(target).__name__}")
    for name, t in (("preds", preds), ("target", target)):
        if not t.is_floating_point():
            raise TypeError(f"{name}: expected a floating point tensor, got {t.dtype}")
    if preds.dim() != 4 or preds.shape[-1] < 41 or preds.shape[-2] < 41:
        raise ValueError(f"preds: expected [N, C, H, W] with H, W >= 41, got shape {list(preds.shape)}")
    if preds.shape != target.shape:
        raise ValueError(f"target: expected the shape of preds {list(preds.shape)}, got {list(target.shape)}")
    if target.device != preds.device:
        raise ValueError(f"target: expected a tensor on {preds.device} (the device of preds), got {target.device}")
    return preds, target.to(preds.dtype)


def _window(size: int, device: torch.device) -> Tensor:
    x = torch.arange(size, dtype=torch.float64, device=device) - (size - 1) / 2
    g = torch.exp(-(x**2) / (2.0 * (size / 5) ** 2))
    return g / g.sum()  # the 2-D window of torchmetrics is this one's outer product with itself


def _moments(p: Tensor, t: Tensor, w: Tensor) -> Tensor:
    planes, h, wd = p.shape
    out = torch.empty(5, planes, h - w.numel() + 1, wd - w.numel() + 1, dtype=torch.float64, device=p.device)
    image_ssim.ssim_moments(out, p, t, w, w, 0, 0)
    return out


def per_image(preds: Tensor, target: Tensor, sigma_n_sq: float) -> Tensor:
    """VIF per image, float64 [N] (inputs already checked)."""
    n, c, h, w = preds.shape
    p, t = preds.reshape(n * c, h, w), target.reshape(n * c, h, w)
    kept = torch.zeros(n * c, dtype=torch.float64, device=preds.device)
    carried = torch.zeros_like(kept)
    for scale in range(_SCALES):
        win = _window(2 ** (_SCALES - scale) + 1, preds.device)
        if scale > 0:
            m = _moments(p, t, win)
            p, t = m[0, :, ::2, ::2], m[1, :, ::2, ::2]
        m = _moments(p, t, win)
        mu_p, mu_t = m[0], m[1]
        var_t = (m[3] - mu_t * mu_t).clamp_(min=0.0)
        var_p = (m[2] - mu_p * mu_p).clamp_(min=0.0)
        cov = m[4] - mu_t * mu_p
        g = cov / (var_t + _EPS)
        var_v = var_p - g * cov
        flat = var_t < _EPS
        g = g.masked_fill(flat, 0.0)
        var_v = torch.where(flat, var_p, var_v)
        var_t = var_t.masked_fill(flat, 0.0)
        quiet = var_p < _EPS
        g = g.masked_fill(quiet, 0.0)
        var_v = var_v.masked_fill(quiet, 0.0)
        negative = g < 0
        var_v = torch.where(negative, var_p, var_v)
        g = g.masked_fill(negative, 0.0)
        var_v = var_v.clamp(min=_EPS)
        kept += torch.log10(1.0 + g * g * var_t / (var_v + sigma_n_sq)).sum((1, 2))
        carried += torch.log10(1.0 + var_t / sigma_n_sq).sum((1, 2))
    scores = (kept / carried).reshape(n, c).mean(1)
    if not bool(torch.isfinite(scores).all()):
        for name, x in (("preds", preds), ("target", target)):
            if not bool(torch.isfinite(x).all()):
                raise ValueError(f"{name}: expected finite values, got NaN or infinity")
        for name, x in (("preds", preds), ("target", target)):  # variances that overflowed, not a constant channel
            if bool(torch.isinf(x.double().square()).any()):
                raise ValueError(f"{name}: expected values whose squares fit float64, got a VIF of NaN")
        raise ValueError("target: expected every channel to vary, got a constant one (its VIF is 0/0)")
    return scores


def visual_information_fidelity(
    preds: Tensor, target: Tensor, sigma_n_sq: float = 2.0, reduction: str = "mean"
) -> Tensor:
    """Visual information fidelity of ``preds`` against ``target`` ([N, C, H, W], H and W at
    least 41), per image averaged over its channels, then averaged (``reduction="mean"``) or
    not (``"none"``). ``sigma_n_sq``: the variance of the visual noise. The result has preds'
    dtype.

    Differences from torchmetrics: see the module docstring.

        >>> import torch
        >>> from torchtally.functional.image import visual_information_fidelity
        >>> g = torch.Generator().manual_seed(0)
        >>> preds = torch.rand(2, 1, 48, 48, generator=g)
        >>> visual_information_fidelity(preds, preds * 0.75)
        tensor(1.7623)
    """
    sigma = check_sigma_n_sq(sigma_n_sq)
    check_reduction(reduction)
    preds, target = check_images(preds, target)
    scores = per_image(preds, target, sigma)
    return (scores.mean() if reduction == "mean" else scores).to(preds.dtype)
