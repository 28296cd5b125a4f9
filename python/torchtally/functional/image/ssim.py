"""SSIM and multi-scale SSIM of a batch of images (torchmetrics.functional.image's
structural_similarity_index_measure and multiscale_structural_similarity_index_measure).

Each image's score comes from the five windowed moments, computed in float64
(functional/image/structural.py); the result has preds' dtype.

Differences from torchmetrics: float64 moments (torchmetrics: the input's dtype, where
E[x^2] - E[x]^2 loses digits in float32); integer inputs raise TypeError, NaN or infinite inputs,
a non-positive data_range and images too small for the window's reflect padding raise ValueError
(torchmetrics: NaN, or an error from torch's padding); with a window of 1 the contrast
sensitivity is averaged over the whole image (torchmetrics crops it to nothing: NaN); MS-SSIM's
betas are applied as float64 (torchmetrics rounds them to float32: about 1e-9 relative); a constant
batch with data_range=None raises ValueError (torchmetrics: NaN); no gradient.
"""

from typing import Optional, Sequence, Tuple, Union

from torch import Tensor

from . import structural as sp

__all__ = ["structural_similarity_index_measure", "multiscale_structural_similarity_index_measure"]


def structural_similarity_index_measure(
    preds: Tensor,
    target: Tensor,
    gaussian_kernel: bool = True,
    sigma: Union[float, Sequence[float]] = 1.5,
    kernel_size: Union[int, Sequence[int]] = 11,
    reduction: Optional[str] = "elementwise_mean",
    data_range: Optional[Union[float, Tuple[float, float]]] = None,
    k1: float = 0.01,
    k2: float = 0.03,
    return_full_image: bool = False,
    return_contrast_sensitivity: bool = False,
) -> Union[Tensor, Tuple[Tensor, Tensor]]:
    """Structural similarity of ``preds`` and ``target`` ([N, C, H, W] or [N, C, D, H, W]),
    per image averaged over its channels and pixels, then reduced over the images
    (``reduction``: "elementwise_mean", "sum", "none" or None). ``gaussian_kernel`` chooses a
    Gaussian window of standard deviation ``sigma`` (size 2 * int(3.5 sigma + 0.5) + 1) or a
    uniform one of ``kernel_size``. ``data_range``: the value range (a tuple also clamps the
    inputs to it); None takes the batch's larger max - min of preds and target.
    ``return_full_image`` also returns the SSIM map [N, C, ...], ``return_contrast_sensitivity``
    each image's contrast sensitivity [N], not reduced (at most one of the two).

    Differences from torchmetrics: see the module docstring.

        >>> import torch
        >>> from torchtally.functional.image import structural_similarity_index_measure
        >>> g = torch.Generator().manual_seed(0)
        >>> preds = torch.rand(2, 1, 16, 16, generator=g)
        >>> structural_similarity_index_measure(preds, preds * 0.75, data_range=1.0)
        tensor(0.9219)
    """
    sp.check_reduction(reduction)
    if return_full_image and return_contrast_sensitivity:
        raise ValueError("return_full_image, return_contrast_sensitivity: expected at most one of them to be True")
    opts = sp.check_options(gaussian_kernel, sigma, kernel_size, data_range, k1, k2)
    preds, target = sp.check_images(preds, target)
    scores, cs, full = sp.per_image(preds, target, opts, return_contrast_sensitivity, return_full_image)
    result = sp.reduce_scores(scores, reduction).to(preds.dtype)
    if cs is not None:
        return result, cs.to(preds.dtype)
    if full is not None:
        return result, full.to(preds.dtype)
    return result


def multiscale_structural_similarity_index_measure(
    preds: Tensor,
    target: Tensor,
    gaussian_kernel: bool = True,
    sigma: Union[float, Sequence[float]] = 1.5,
    kernel_size: Union[int, Sequence[int]] = 11,
    reduction: Optional[str] = "elementwise_mean",
    data_range: Optional[Union[float, Tuple[float, float]]] = None,
    k1: float = 0.01,
    k2: float = 0.03,
    betas: Tuple[float, ...] = sp.DEFAULT_BETAS,
    normalize: Optional[str] = "relu",
) -> Tensor:
    """Multi-scale SSIM: over ``len(betas)`` scales (each half the size of the one before, by
    2x2 average pooling), the product of every scale's contrast sensitivity (the last scale's
    SSIM) to the power of its beta. ``normalize``: "relu" clamps each factor at 0, "simple" maps
    it to (x + 1) / 2, None leaves it (a negative factor then gives NaN, as in torchmetrics).
    The other arguments as in structural_similarity_index_measure.

    Differences from torchmetrics: as structural_similarity_index_measure's.

        >>> import torch
        >>> from torchtally.functional.image import multiscale_structural_similarity_index_measure
        >>> g = torch.Generator().manual_seed(0)
        >>> preds = torch.rand(1, 1, 180, 180, generator=g)
        >>> multiscale_structural_similarity_index_measure(preds, preds * 0.75, data_range=1.0)
        tensor(0.9634)
    """
    sp.check_reduction(reduction)
    betas = sp.check_ms_options(betas, normalize)
    opts = sp.check_options(gaussian_kernel, sigma, kernel_size, data_range, k1, k2)
    preds, target = sp.check_images(preds, target)
    scores = sp.ms_per_image(preds, target, opts, betas, normalize)
    return sp.reduce_scores(scores, reduction).to(preds.dtype)
