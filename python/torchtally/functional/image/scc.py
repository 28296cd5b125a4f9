"""Spatial Correlation Coefficient (torchmetrics.functional.image.spatial_correlation_coefficient):
both images pass a high-pass filter (a 2-D convolution, doubled, over a symmetrically mirrored
border), then the local correlation of the two filtered images under a uniform window (zero
padding) is averaged per image. In float64; the per-image means are what the class sums."""

from typing import Optional, Tuple

import torch
import torch.nn.functional as F
from torch import Tensor

from ...kernels.image import ssim as image_ssim
from .pixel_inputs import refuse_non_finite, tensor_of
from .windows import check_reduction, check_window_size, correlate, image_means

__all__ = ["spatial_correlation_coefficient"]

_F64 = torch.float64


def default_hp_filter() -> Tensor:
    """The Laplacian high-pass filter torchmetrics uses when none is given."""
    return torch.tensor([[-1, -1, -1], [-1, 8, -1], [-1, -1, -1]])


def check_hp_filter(hp_filter: Optional[Tensor], name: str = "hp_filter") -> Tensor:
    """A real 2-D filter of at least 2 x 2 (torchmetrics' mirrored border is wrong for a side of 1)."""
    if hp_filter is None:
        return default_hp_filter()
    if not isinstance(hp_filter, Tensor):
        raise TypeError(f"{name}: expected a tensor, got {type(hp_filter).__name__}")
    if hp_filter.dtype == torch.bool or hp_filter.is_complex():
        raise TypeError(f"{name}: expected a real tensor, got {hp_filter.dtype}")
    if hp_filter.dim() != 2 or min(hp_filter.shape) < 2:
        raise ValueError(f"{name}: expected a 2-D filter of at least 2 x 2, got shape {list(hp_filter.shape)}")
    return hp_filter


def _checked_images(preds: object, target: object) -> Tuple[Tensor, Tensor]:
    preds, target = tensor_of("preds", preds), tensor_of("target", target)
    for name, x in (("preds", preds), ("target", target)):
        if x.dtype == torch.bool:
            raise TypeError(f"{name}: expected a real tensor, got {x.dtype}")
    if preds.shape != target.shape:
        raise ValueError(f"target: expected the shape of preds {list(preds.shape)}, got {list(target.shape)}")
    if preds.dim() not in (3, 4):
        raise ValueError(f"preds: expected [N, C, H, W] or [N, H, W] images, got {list(preds.shape)}")
    if preds.dim() == 3:
        preds, target = preds.unsqueeze(1), target.unsqueeze(1)
    return preds, target


def _mirrored(x: Tensor, left: int, right: int, top: int, bottom: int) -> Tensor:
    """x [M, 1, H, W] with a mirrored border that repeats the edge (d c b a | a b c d)."""
    parts = [x[..., :left].flip(3), x, x[..., x.shape[-1] - right :].flip(3)]
    x = torch.cat(parts, 3)
    return torch.cat([x[..., :top, :].flip(2), x, x[..., x.shape[-2] - bottom :, :].flip(2)], 2)


def _high_pass(x: Tensor, kernel: Tensor) -> Tensor:
    kh, kw = kernel.shape[-2:]
    padded = _mirrored(x, (kw - 1) // 2, kw // 2, (kh - 1) // 2, kh // 2)
    return correlate(padded, kernel.flip([0, 1])) * 2.0


def scc_image_scores(preds: Tensor, target: Tensor, hp_filter: Tensor, window_size: int) -> Tensor:
    """Per image, the mean over channels and pixels of the spatial correlation: float64 [N]
    (inputs checked; ``hp_filter`` already checked)."""
    preds, target = _checked_images(preds, target)
    n, c, height, width = preds.shape
    if window_size > height or window_size > width:
        raise ValueError(f"window_size: expected at most the image size {height}x{width}, got {window_size}")
    kh, kw = hp_filter.shape
    if kh // 2 > height or kw // 2 > width:
        raise ValueError(f"hp_filter: a {kh}x{kw} filter is too large for images of {height}x{width}")
    kernel = hp_filter.detach().to(dtype=_F64, device=preds.device)
    p = _high_pass(preds.detach().to(_F64).reshape(n * c, 1, height, width), kernel)
    t = _high_pass(target.detach().to(_F64).reshape(n * c, 1, height, width), kernel)
    lead, trail = window_size // 2, (window_size - 1) // 2
    # the five local means under the uniform window over the zero-padded planes, in one pass of
    # the windowed-moments kernel (zeros square to zeros: padding p and t pads the products)
    uniform = torch.full((window_size,), 1.0 / window_size, dtype=_F64, device=p.device)
    pads = (lead, trail, lead, trail)
    stats = torch.empty(5, n * c, height, width, dtype=_F64, device=p.device)
    if n * c:
        image_ssim.ssim_moments(stats, F.pad(p, pads)[:, 0], F.pad(t, pads)[:, 0], uniform, uniform, 0, 0)
    mean_p, mean_t, mean_pp, mean_tt, mean_pt = stats.unbind(0)
    var_p = (mean_pp - mean_p * mean_p).clamp(min=0.0)
    var_t = (mean_tt - mean_t * mean_t).clamp(min=0.0)
    cov = mean_pt - mean_t * mean_p
    den = var_t.sqrt() * var_p.sqrt()
    score = torch.where(den == 0, torch.zeros_like(cov), cov / torch.where(den == 0, torch.ones_like(den), den))
    scores = image_means(score.reshape(n, c, height, width))
    refuse_non_finite(scores, preds=preds, target=target)
    return scores


def spatial_correlation_coefficient(
    preds: Tensor,
    target: Tensor,
    hp_filter: Optional[Tensor] = None,
    window_size: int = 8,
    reduction: Optional[str] = "mean",
) -> Tensor:
    """Spatial correlation coefficient of ``preds`` and ``target`` ([N, C, H, W] or [N, H, W]):
    the mean over images ("mean") or one value per image ("none"/None), float32 (as torchmetrics,
    which computes in float32).

    Differences from torchmetrics: computed in float64, then given as float32; a filter with a
    side of 1 raises ValueError (torchmetrics mirrors the whole image into its border); no
    gradient.

        >>> import torch
        >>> from torchtally.functional.image import spatial_correlation_coefficient
        >>> x = torch.arange(2 * 16 * 16.0).reshape(2, 1, 16, 16)
        >>> spatial_correlation_coefficient((x * 0.37).sin(), (x * 0.41).cos())
        tensor(0.1121)
    """
    how = check_reduction(reduction, ("mean", "none", None))
    hp = check_hp_filter(hp_filter)
    window_size = check_window_size(window_size)
    scores = scc_image_scores(preds, target, hp, window_size)
    return (scores.mean() if how == "mean" else scores).to(torch.float32)
