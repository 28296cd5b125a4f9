"""Image gradients and total variation (torchmetrics.functional.image): the differences of
neighbouring pixels along the height and the width of images [N, C, H, W].

Total variation is computed exactly for integer images (int64) and in float64 for floating
ones, per image, then reduced.
"""

from typing import Optional, Tuple

import torch
from torch import Tensor

from ...kernels.image.total_variation import total_variation
from .pixel_inputs import F64, four_dims, reduce_scores, refuse_non_finite, tensor_of

__all__ = ["image_gradients"]

TV_REDUCTIONS = ("sum", "mean", "none", None)
_UNSIGNED = (torch.uint8, torch.bool)


def _signed_image(name: str, img: object, note: str) -> Tensor:
    img = tensor_of(name, img)
    if img.dtype in _UNSIGNED:
        raise TypeError(
            f"{name}: expected a floating point or signed integer tensor, got {img.dtype} "
            "(differences of unsigned values wrap around)"
        )
    four_dims(name, img, note=note)
    return img


def image_gradients(img: Tensor) -> Tuple[Tensor, Tensor]:
    """(dy, dx) of images ``img`` [N, C, H, W]: ``dy[..., i, :] = img[..., i + 1, :] -
    img[..., i, :]``, ``dx`` the same along the width, each 0 in its last row (column); in
    ``img``'s dtype and shape.

    Differences from torchmetrics: uint8 and bool images raise TypeError (torchmetrics: uint8
    differences wrap around modulo 256, bool ones raise a RuntimeError); a tensor that is not
    4-d raises an error that is both a ValueError and a RuntimeError (torchmetrics:
    RuntimeError).

        >>> import torch
        >>> from torchtally.functional.image import image_gradients
        >>> img = torch.arange(9.0).reshape(1, 1, 3, 3)
        >>> dy, dx = image_gradients(img)
        >>> dy[0, 0]
        tensor([[3., 3., 3.],
                [3., 3., 3.],
                [0., 0., 0.]])
        >>> dx[0, 0]
        tensor([[1., 1., 0.],
                [1., 1., 0.],
                [1., 1., 0.]])
    """
    if not isinstance(img, Tensor):
        raise TypeError(f"img: expected a torch.Tensor, got {type(img).__name__}")
    img = _signed_image("img", img, "The `img` expects a 4D tensor")
    dy = torch.zeros(img.shape, dtype=img.dtype, device=img.device)
    dx = torch.zeros(img.shape, dtype=img.dtype, device=img.device)
    dy[..., :-1, :] = img[..., 1:, :] - img[..., :-1, :]
    dx[..., :, :-1] = img[..., :, 1:] - img[..., :, :-1]
    return dy, dx


def tv_scores(img: object) -> Tuple[Tensor, bool]:
    """(total variation of each image [N] float64, whether the images are integers). Integer
    images are summed in int64 (exact), floating ones in float64."""
    img = _signed_image("img", img, "Expected input `img` to be an 4D tensor")
    if img.is_floating_point():
        scores = torch.empty(img.shape[0], dtype=F64, device=img.device)
        total_variation(scores, img)  # one float64 pass in C on the CPU
        refuse_non_finite(scores, img=img)
        return scores, False
    _check_int64_room(img)
    x = img.to(torch.int64)
    down = (x[..., 1:, :] - x[..., :-1, :]).abs().sum(dim=(1, 2, 3))
    across = (x[..., :, 1:] - x[..., :, :-1]).abs().sum(dim=(1, 2, 3))
    return (down + across).to(F64), True


def _check_int64_room(img: Tensor) -> None:
    """ValueError unless every image's total variation of integer ``img`` fits int64: each of
    its neighbour differences is at most max - min, so their sum is at most that times their
    count (int64 differences past 2^63 would wrap silently)."""
    if img.numel() == 0:
        return
    _, c, h, w = img.shape
    terms = c * ((h - 1) * w + h * (w - 1))
    spread = int(img.max()) - int(img.min())  # Python ints: exact
    if spread * terms >= 2**63:
        raise ValueError(
            f"img: integer values from {int(img.min())} to {int(img.max())} could give a total variation past "
            "int64's range (it would wrap); convert the images to float64"
        )


def tv_result(scores: Tensor, count: int, reduction: Optional[str], dtype: torch.dtype) -> Tensor:
    if reduction == "mean":
        return (scores.sum() / count).to(dtype)
    return reduce_scores(scores, "sum" if reduction == "sum" else None).to(dtype)
