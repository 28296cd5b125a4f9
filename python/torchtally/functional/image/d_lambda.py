"""The pansharpening indices of torchmetrics.functional.image: spectral distortion (D_lambda),
spatial distortion (D_s) and Quality with No Reference (QNR = (1 - D_lambda)^alpha (1 - D_s)^beta).

Each is a function of mean UQI values (11 x 11 Gaussian window, sigma 1.5), and torchmetrics'
mean over the whole dataset is the mean over images of each image's mean UQI (every image's
map has the same size), so the state is a float64 sum over images of per-image means:

* D_lambda: per image, the mean UQI between every pair of channels k < r, of the fused image
  and of the reference: [2, P] with P = C (C - 1) / 2;
* D_s: per image and channel, the mean UQI of (ms, degraded pan) and of (preds, pan): [2, C];
* QNR: both, with D_lambda taken between preds and ms.
"""

from typing import Optional, Tuple

import torch
import torch.nn.functional as F
from torch import Tensor

from .pixel_inputs import refuse_non_finite
from .windows import check_image_batch, check_reduction, uniform_filter, uqi_maps

__all__ = ["spectral_distortion_index"]

REDUCTIONS = ("elementwise_mean", "sum", "none")
_KERNEL, _SIGMA = (11, 11), (1.5, 1.5)


def check_positive_int(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError(f"Expected `{name}` to be a positive integer. Got {name}: {value!r}.")
    return value


def check_nonnegative_real(name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0:
        raise ValueError(f"Expected `{name}` to be a non-negative real number. Got {name}: {value!r}.")
    return value


def _mean_uqi(a: Tensor, b: Tensor, eps: float) -> Tensor:
    """Per image and channel, the mean UQI of a and b: float64 [N, C]."""
    maps = uqi_maps(a, b, _KERNEL, _SIGMA, eps)
    return maps.flatten(2).mean(2)  # (not reshape(N, C, -1): ambiguous for an empty batch)


def _pair_means(x: Tensor) -> Tensor:
    """Per image, the mean UQI of every channel pair k < r (row-major order): float64 [N, P]."""
    n, c = x.shape[:2]
    first, second = torch.triu_indices(c, c, offset=1, device=x.device)
    if first.numel() == 0:
        return torch.zeros(n, 0, dtype=torch.float64, device=x.device)
    pairs = first.numel()  # (explicit sizes, not -1: ambiguous for an empty batch)
    a = x[:, first].reshape(n * pairs, 1, *x.shape[2:])
    b = x[:, second].reshape(n * pairs, 1, *x.shape[2:])
    return _mean_uqi(a, b, torch.finfo(x.dtype).eps).reshape(n, pairs)


def check_spectral_pair(preds: object, target: object, name: str = "target") -> Tuple[Tensor, Tensor]:
    """D_lambda's inputs; torchmetrics' words in brackets (it calls preds "fused" here)."""
    shape_words = "Expected `preds` and `target` to have BxCxHxW shape"
    p = check_image_batch("preds", preds, note=shape_words)
    t = check_image_batch(name, target, note=shape_words)
    if p.dtype != t.dtype:
        raise TypeError(
            f"{name}: expected the dtype of preds ({p.dtype}), got {t.dtype} "
            "(Expected `ms` and `fused` to have the same data type)"
        )
    if p.shape[:2] != t.shape[:2]:
        raise ValueError(
            f"{name}: expected the batch and channel sizes of preds {list(p.shape[:2])}, got {list(t.shape)} "
            "(Expected `preds` and `target` to have same batch and channel sizes)"
        )
    return p, t


def spectral_sums(preds: Tensor, target: Tensor, name: str = "target") -> Tensor:
    """Sums over the batch of the per-image channel-pair mean UQI: float64 [2, P] (row 0: target,
    row 1: preds). Inputs checked (``name``: what target is called in errors)."""
    preds, target = check_spectral_pair(preds, target, name)
    sums = torch.stack((_pair_means(target).sum(0), _pair_means(preds).sum(0)))
    refuse_non_finite(sums, preds=preds, **{name: target})
    return sums


def spectral_from_sums(sums: Tensor, channels: int, images: Tensor, p: int, reduction: str) -> Tensor:
    """D_lambda (float64 scalar; for one channel 0, as [1, 1] for "none", as torchmetrics)."""
    if channels == 1:
        zero = torch.zeros(1, 1, dtype=torch.float64, device=sums.device)
        return zero if reduction == "none" else zero.sum()
    means = sums.reshape(2, -1) / images
    diff = (means[0] - means[1]).abs() ** p
    return (2.0 * diff.sum() / (channels * (channels - 1))) ** (1.0 / p)


def check_spatial_inputs(
    preds: object, ms: object, pan: object, pan_lr: Optional[object], window_size: int
) -> Tuple[Tensor, Tensor, Tensor, Optional[Tensor]]:
    """torchmetrics' checks of D_s's inputs, and window_size smaller than ms; torchmetrics'
    words in brackets."""
    p = check_image_batch("preds", preds)
    named = [("ms", check_image_batch("ms", ms)), ("pan", check_image_batch("pan", pan))]
    if pan_lr is not None:
        named.append(("pan_lr", check_image_batch("pan_lr", pan_lr)))
    for name, x in named:
        if x.dtype != p.dtype:
            raise TypeError(
                f"{name}: expected the dtype of preds ({p.dtype}), got {x.dtype} "
                f"(Expected `preds` and `{name}` to have the same data type)"
            )
        if x.shape[:2] != p.shape[:2]:
            raise ValueError(
                f"{name}: expected the batch and channel sizes of preds {list(p.shape[:2])}, got {list(x.shape)} "
                f"(Expected `preds` and `{name}` to have the same batch and channel sizes)"
            )
    m, q = named[0][1], named[1][1]
    _same_size("pan", q, "preds", p, "Expected `preds` and `pan` to have the same")
    for axis, side in ((-2, "height"), (-1, "width")):
        if p.shape[axis] % m.shape[axis]:
            raise ValueError(
                f"ms: expected a height and width dividing those of preds {list(p.shape[-2:])}, "
                f"got {list(m.shape[-2:])} (Expected {side} of `preds` to be multiple of {side} of `ms`)"
            )
    if pan_lr is not None:
        _same_size("pan_lr", named[2][1], "ms", m, "Expected `ms` and `pan_lr` to have the same")
    if window_size >= m.shape[-2] or window_size >= m.shape[-1]:
        raise ValueError(
            f"window_size: expected less than the height and width of ms {list(m.shape[-2:])}, got {window_size} "
            "(Expected `window_size` to be smaller than dimension of `ms`)"
        )
    return p, m, q, (named[2][1] if pan_lr is not None else None)


def _same_size(name: str, x: Tensor, other_name: str, other: Tensor, words: str) -> None:
    """ValueError unless x has other's height and width; ``words``: torchmetrics' words, less
    the side ("height" or "width") it names."""
    for axis, side in ((-2, "height"), (-1, "width")):
        if x.shape[axis] != other.shape[axis]:
            raise ValueError(
                f"{name}: expected the height and width of {other_name} {list(other.shape[-2:])}, "
                f"got {list(x.shape[-2:])} ({words} {side})"
            )


def degraded_pan(pan: Tensor, size: Tuple[int, int], window_size: int) -> Tensor:
    """pan blurred by the uniform window and resized to ``size`` (bilinear, no antialias: what
    torchvision's resize does for torchmetrics), float64."""
    blurred = uniform_filter(pan, window_size)
    return F.interpolate(blurred, size=size, mode="bilinear", align_corners=False, antialias=False)


def spatial_sums(preds: Tensor, ms: Tensor, pan: Tensor, pan_lr: Optional[Tensor], window_size: int) -> Tensor:
    """Sums over the batch of per-image, per-channel mean UQI: float64 [2, C] (row 0: ms against
    the degraded pan, row 1: preds against pan). Inputs checked."""
    preds, ms, pan, pan_lr = check_spatial_inputs(preds, ms, pan, pan_lr, window_size)
    eps = torch.finfo(preds.dtype).eps
    low = degraded_pan(pan, tuple(ms.shape[-2:]), window_size) if pan_lr is None else pan_lr  # type: ignore[arg-type]
    sums = torch.stack((_mean_uqi(ms, low, eps).sum(0), _mean_uqi(preds, pan, eps).sum(0)))
    refuse_non_finite(sums, preds=preds, ms=ms, pan=pan, **({} if pan_lr is None else {"pan_lr": pan_lr}))
    return sums


def spatial_from_sums(sums: Tensor, images: Tensor, norm_order: int, reduction: str) -> Tensor:
    """D_s (float64): a scalar, or one value per channel for "none"."""
    means = sums.reshape(2, -1) / images
    diff = (means[0] - means[1]).abs() ** norm_order
    if reduction == "elementwise_mean":
        diff = diff.mean()
    elif reduction == "sum":
        diff = diff.sum()
    return diff ** (1.0 / norm_order)


def qnr_from_parts(d_lambda: Tensor, d_s: Tensor, alpha: float, beta: float) -> Tensor:
    return (1 - d_lambda) ** alpha * (1 - d_s) ** beta


def spectral_distortion_index(preds: Tensor, target: Tensor, p: int = 1, reduction: str = "elementwise_mean") -> Tensor:
    """Spectral distortion index D_lambda of ``preds`` against ``target`` ([N, C, H, W] each, same
    dtype, batch and channels; the sizes may differ): the p-mean over channel pairs of the
    difference of their mean UQI. A scalar for every ``reduction`` (as torchmetrics), in torch's
    default dtype.

    Differences from torchmetrics: UQI in float64 (torchmetrics: the inputs' dtype, then float32);
    no gradient.

        >>> import torch
        >>> from torchtally.functional.image import spectral_distortion_index
        >>> x = torch.arange(2 * 3 * 16 * 16.0).reshape(2, 3, 16, 16)
        >>> spectral_distortion_index((x * 0.37).sin(), (x * 0.41).cos())
        tensor(0.5932)
    """
    p = check_positive_int("p", p)
    how = check_reduction(reduction, REDUCTIONS)
    sums = spectral_sums(preds, target)
    images = torch.tensor(float(preds.shape[0]), dtype=torch.float64)
    return spectral_from_sums(sums, preds.shape[1], images, p, how).to(torch.get_default_dtype())
