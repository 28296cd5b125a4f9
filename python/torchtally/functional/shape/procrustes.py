"""``procrustes_disparity`` (torchmetrics.functional.shape.procrustes' names): the disparity of
two batches of point clouds after the best similarity transform (translation, scaling,
rotation/reflection) of the second onto the first, as ``scipy.spatial.procrustes`` per item.

The alignment runs in float64 (centre, scale to unit Frobenius norm, one batched SVD), so the
per-item disparities are exact to float64 rounding. No C kernel: a batched SVD of [N, D, D]
matrices is torch's. The class needs only the disparities: ``disparities`` takes them from the
singular values alone (no rotation, no aligned cloud), fewer passes over the clouds than
torchmetrics' float32 alignment.
"""

import math
from typing import Tuple, Union

import torch
from torch import Tensor

from ...errors import ShapeError

__all__ = ["procrustes_disparity", "checked_clouds", "centred_clouds", "aligned", "disparities"]

_F64 = torch.float64


def checked_clouds(point_cloud1: Tensor, point_cloud2: Tensor) -> Tuple[Tensor, Tensor]:
    """Both clouds as float64 [N, M, D], centred, or TypeError/ValueError naming the argument: the
    same shape, three dims, floating, finite, and no item whose points are all the same (scipy:
    "Input matrices must contain >1 unique points"; torchmetrics gives NaN)."""
    a, b, _ = centred_clouds(point_cloud1, point_cloud2)
    return a, b


def _check_inputs(point_cloud1: Tensor, point_cloud2: Tensor) -> None:
    """Types, shapes and devices (checked_clouds' first checks)."""
    for name, value in (("point_cloud1", point_cloud1), ("point_cloud2", point_cloud2)):
        if not isinstance(value, Tensor):
            raise TypeError(f"Expected `{name}` to be a torch.Tensor, got {type(value).__name__}")
        if not value.dtype.is_floating_point:
            raise TypeError(f"Expected `{name}` to be a floating point tensor, got {value.dtype}")
    if point_cloud1.shape != point_cloud2.shape:
        raise ShapeError(
            "Expected `point_cloud1` and `point_cloud2` to have the same shape, got "
            f"{tuple(point_cloud1.shape)} and {tuple(point_cloud2.shape)} (Predictions and targets are expected to "
            "have the same shape)"
        )
    if point_cloud1.dim() != 3:
        raise ValueError(
            "Expected `point_cloud1` and `point_cloud2` to be 3D tensors of shape (N, M, D) (batch, points, "
            f"dimensions), got {point_cloud1.dim()} dimensions (Expected both datasets to be 3D tensors of shape "
            "(N, M, D))"
        )
    if point_cloud1.device != point_cloud2.device:
        raise ValueError(
            f"Expected `point_cloud2` on the device of `point_cloud1` ({point_cloud1.device}), "
            f"got {point_cloud2.device}"
        )


def _all_finite(x: Tensor) -> bool:
    # min and max in one pass (NaN where a NaN is): on the CPU some 30 times cheaper than
    # torch.isfinite(x).all(), which writes a bool per value first
    if x.numel() == 0:
        return True
    low, high = torch.aminmax(x)
    return math.isfinite(low.item()) and math.isfinite(high.item())  # Python floats: no more tensor ops


def centred_clouds(point_cloud1: Tensor, point_cloud2: Tensor) -> Tuple[Tensor, Tensor, Tensor]:
    """checked_clouds' checks and centred float64 clouds a, b, with the product of their
    Frobenius norms [N] (each > 0: an item whose points are all equal raises). Both clouds go
    through one [2, N, M, D] float64 buffer: every step is one op for the two, not two."""
    _check_inputs(point_cloud1, point_cloud2)
    both = torch.empty((2, *point_cloud1.shape), dtype=_F64, device=point_cloud1.device)
    both[0].copy_(point_cloud1.detach())
    both[1].copy_(point_cloud2.detach())
    if not _all_finite(both):  # widening to float64 keeps inf and NaN
        bad = "point_cloud1" if not _all_finite(both[0]) else "point_cloud2"
        raise ValueError(f"`{bad}` holds NaN or infinite values")
    both -= both.mean(dim=2, keepdim=True)
    norms = torch.linalg.vector_norm(both, dim=(2, 3))
    if both.shape[1] and (both.shape[2] * both.shape[3] == 0 or bool((norms == 0).any())):
        bad = "point_cloud1" if both.shape[2] * both.shape[3] == 0 or bool((norms[0] == 0).any()) else "point_cloud2"
        raise ValueError(
            f"`{bad}`: every item needs more than one distinct point (an item with one point, or with all "
            "its points equal, has no shape to align)"
        )
    return both[0], both[1], norms[0] * norms[1]


def disparities(a: Tensor, b: Tensor, norms: Tensor) -> Tensor:
    """The disparity [N] of centred float64 clouds (``centred_clouds``) without forming the
    aligned cloud: with both clouds at unit norm and the optimal rotation, ||a - s b R^T||^2 =
    1 - 2 s^2 + s^2 = 1 - s^2, s the sum of the singular values of the normalised cross-covariance
    a^T b / (|a| |b|). Its absolute error is about float64's eps (1e-16, where the full form's is
    relative), far below any float32 input's resolution; clipped at 0."""
    cross = torch.bmm(a.transpose(1, 2), b) / norms[:, None, None]
    s = torch.linalg.svdvals(cross).sum(1)
    return (1.0 - s * s).clamp_min(0.0)


def aligned(a: Tensor, b: Tensor) -> Tuple[Tensor, Tensor, Tensor]:
    """Disparity [N], scale [N, 1] and rotation [N, D, D] of centred float64 clouds ``a``, ``b``
    (``checked_clouds``): both scaled to unit norm, ``b`` rotated by R = U V^T from the SVD of
    (b^T a)^T and scaled by the sum of its singular values, disparity = ||a - s b R^T||^2."""
    a = a / torch.linalg.norm(a, dim=(1, 2), keepdim=True)
    b = b / torch.linalg.norm(b, dim=(1, 2), keepdim=True)
    u, w, vh = torch.linalg.svd(a.transpose(1, 2) @ b, full_matrices=False)
    rotation = u @ vh
    scale = w.sum(1, keepdim=True)
    fitted = scale[:, :, None] * (b @ rotation.transpose(1, 2))
    disparity = (a - fitted).square().sum(dim=(1, 2))
    return disparity, scale, rotation


def procrustes_disparity(
    point_cloud1: Tensor, point_cloud2: Tensor, return_all: bool = False
) -> Union[Tensor, Tuple[Tensor, Tensor, Tensor]]:
    """Procrustes disparity of each item of two batches of point clouds [N, M, D] (N items of M
    points in D dimensions): ``scipy.spatial.procrustes(point_cloud1[i], point_cloud2[i])``'s
    disparity for each i, a tensor [N]. ``return_all``: also the scale [N, 1] and the rotation
    [N, D, D] applied to the second cloud. Results in the inputs' (promoted) dtype, computed in
    float64.

    Differences from torchmetrics: computed in float64 (torchmetrics: in the inputs' dtype); an
    item whose points are all equal (no shape), NaN / inf values and integer inputs raise
    (torchmetrics: NaN, NaN, a RuntimeError); no gradient.

        >>> import torch
        >>> from torchtally.functional.shape import procrustes_disparity
        >>> square = torch.tensor([[[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]]])
        >>> turned = 3.0 * square @ torch.tensor([[0.0, 1.0], [-1.0, 0.0]]) + 5.0
        >>> procrustes_disparity(square, turned).abs().round(decimals=6)
        tensor([0.])
        >>> procrustes_disparity(square, torch.tensor([[[0.0, 0.0], [1.0, 0.0], [2.0, 0.0], [3.0, 0.0]]]))
        tensor([0.6000])
    """
    a, b = checked_clouds(point_cloud1, point_cloud2)
    dtype = torch.promote_types(point_cloud1.dtype, point_cloud2.dtype)
    disparity, scale, rotation = aligned(a, b)
    if return_all:
        return disparity.to(dtype), scale.to(dtype), rotation.to(dtype)
    return disparity.to(dtype)
