"""Root mean squared error over a sliding window and the Relative Average Spectral Error (RASE)
(torchmetrics.functional.image.root_mean_squared_error_using_sliding_window and
relative_average_spectral_error), from float64 sums over images:

* RMSE-SW: per image, the mean of the windowed RMSE map inside a border of round(w / 2) pixels;
  the result is the mean of these over the images;
* RASE: the windowed RMSE maps summed over images ([C, H, W]) and the windowed target means
  summed over images (scaled by 1 / w^2 as torchmetrics); the result is made from their means
  over all images, so it is not a mean of per-image values.
"""

from typing import Optional, Tuple, Union

import torch
from torch import Tensor

from .pixel_inputs import refuse_non_finite
from .windows import check_pair, check_window_size, half_window, image_means, uniform_filter, uniform_filters

__all__ = ["root_mean_squared_error_using_sliding_window"]


def _checked(preds: Tensor, target: Tensor, window_size: int) -> Tuple[Tensor, Tensor]:
    preds, target = check_pair(preds, target)
    crop = half_window(window_size)
    height, width = target.shape[-2:]
    if crop >= height or crop >= width:
        raise ValueError(
            f"window_size: round(window_size / 2) = {crop} must be smaller than the image height and width, "
            f"got images of {height}x{width}"
        )
    return preds, target


def rmse_maps(preds: Tensor, target: Tensor, window_size: int) -> Tensor:
    """The windowed RMSE map of each image, float64 [N, C, H, W] (inputs checked)."""
    preds, target = _checked(preds, target, window_size)
    return uniform_filter(squared_differences(preds, target), window_size).sqrt()


def squared_differences(preds: Tensor, target: Tensor) -> Tensor:
    """(target - preds)^2 in float64, in one new array (each intermediate of a batch of images
    is megabytes that the allocator may hand back to the system and fault in again)."""
    squares = target.detach().to(torch.float64, copy=True)
    squares.sub_(preds.detach())  # preds widened element by element: exact, as a float64 copy of it
    return squares.square_()


def cropped(x: Tensor, window_size: int) -> Tensor:
    """torchmetrics' border cut of the last two dims (empty for window_size 1, as there)."""
    crop = half_window(window_size)
    return x[..., crop:-crop, crop:-crop]


def rmse_sw_image_scores(preds: Tensor, target: Tensor, window_size: int) -> Tensor:
    """Per image, the mean of its windowed RMSE map inside the border: float64 [N]."""
    scores = image_means(cropped(rmse_maps(preds, target, window_size), window_size))
    refuse_non_finite(scores, preds=preds, target=target)
    return scores


def rase_sums(preds: Tensor, target: Tensor, window_size: int) -> Tuple[Tensor, Tensor]:
    """(windowed RMSE maps summed over the batch, windowed target means / w^2 summed over the
    batch), both float64 [C, H, W]."""
    preds, target = _checked(preds, target, window_size)
    squares, target_means = uniform_filters(squared_differences(preds, target), target, window_size)  # one pass
    maps = squares.sqrt()
    target_means = target_means / window_size**2
    refuse_non_finite(torch.stack((maps.sum(), target_means.sum())), preds=preds, target=target)
    return maps.sum(0), target_means.sum(0)


def rase_from_sums(rmse_sum: Tensor, target_sum: Tensor, images: Tensor, window_size: int) -> Tensor:
    """RASE (float64) from the sums of ``rase_sums`` over ``images`` images."""
    rmse_mean = rmse_sum / images
    target_mean = (target_sum / images).mean(0)
    rase_map = 100.0 / target_mean * (rmse_mean * rmse_mean).mean(0).sqrt()
    return cropped(rase_map, window_size).mean()


def root_mean_squared_error_using_sliding_window(
    preds: Tensor, target: Tensor, window_size: int = 8, return_rmse_map: bool = False
) -> Union[Optional[Tensor], Tuple[Optional[Tensor], Tensor]]:
    """RMSE of ``preds`` against ``target`` ([N, C, H, W], same float dtype) over a sliding
    window_size x window_size window, averaged inside a border of round(window_size / 2) pixels
    and over the images; with ``return_rmse_map``, also the mean windowed RMSE map [C, H, W].
    Results in the inputs' dtype.

    Differences from torchmetrics: float64 throughout (torchmetrics: the inputs' dtype); no
    gradient.

        >>> import torch
        >>> from torchtally.functional.image import root_mean_squared_error_using_sliding_window
        >>> target = torch.linspace(0, 1, 2 * 16 * 16).reshape(2, 1, 16, 16)
        >>> root_mean_squared_error_using_sliding_window(target + 0.1, target)
        tensor(0.1000)
    """
    window_size = check_window_size(window_size)
    maps = rmse_maps(preds, target, window_size)
    score = image_means(cropped(maps, window_size)).mean().to(preds.dtype)
    if return_rmse_map:
        return score, maps.mean(0).to(preds.dtype)
    return score
