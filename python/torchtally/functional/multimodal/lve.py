"""``lip_vertex_error`` (torchmetrics.functional.multimodal.lve's names): Lip Vertex Error of
predicted against ground-truth 3D face meshes, the mean over frames of the largest squared L2
distance between corresponding lip vertices. Per-frame errors in float64."""

import functools
import math
from collections.abc import Sequence
from typing import Any, Tuple

import torch
from torch import Tensor

from ...kernels.multimodal import lip_errors

__all__ = ["lip_vertex_error", "checked_mouth_map", "add_frame_errors"]


def checked_mouth_map(mouth_map: Any) -> Tuple[int, ...]:
    """``mouth_map`` as a tuple of vertex indices, or TypeError/ValueError: a non-empty
    sequence (or 1-D integer tensor) of ints."""
    if isinstance(mouth_map, Tensor):
        if mouth_map.dim() != 1 or mouth_map.dtype.is_floating_point or mouth_map.dtype == torch.bool:
            raise TypeError(f"Expected `mouth_map` to be a list of int vertex indices, got a {mouth_map.dtype} tensor")
        mouth_map = mouth_map.tolist()
    if isinstance(mouth_map, (str, bytes)) or not isinstance(mouth_map, Sequence):
        raise TypeError(f"Expected `mouth_map` to be a list of int vertex indices, got {type(mouth_map).__name__}")
    if not all(isinstance(i, int) and not isinstance(i, bool) for i in mouth_map):
        raise TypeError(f"Expected `mouth_map` to be a list of int vertex indices, got {list(mouth_map)!r}")
    if not mouth_map:
        raise ValueError("mouth_map cannot be empty.")
    return tuple(mouth_map)


def add_frame_errors(out: Tensor, vertices_pred: Tensor, vertices_gt: Tensor, mouth_map: Tuple[int, ...]) -> int:
    """Adds to ``out`` (float64 0-d) the sum of the float64 errors of the first min(T, T')
    frames (each frame's largest squared distance over the ``mouth_map`` vertices) and returns
    that number of frames. Checks first, ``out`` untouched on failure (TypeError/ValueError
    naming the argument): floating tensors [T, V, C] and [T', V, C], indices within [-V, V),
    finite values at the lip vertices. One pass in C on the CPU (the lip_errors kernel)."""
    for name, value in (("vertices_pred", vertices_pred), ("vertices_gt", vertices_gt)):
        if not isinstance(value, Tensor):
            raise TypeError(f"Expected `{name}` to be a torch.Tensor, got {type(value).__name__}")
        if not value.dtype.is_floating_point:
            raise TypeError(f"Expected `{name}` to be a floating point tensor, got {value.dtype}")
    if vertices_pred.ndim != 3 or vertices_gt.ndim != 3:
        raise ValueError(
            "Expected both vertices_pred and vertices_gt to have 3 dimensions but got "
            f"{vertices_pred.ndim} and {vertices_gt.ndim} dimensions respectively."
        )
    if vertices_pred.shape[1:] != vertices_gt.shape[1:]:
        raise ValueError(
            "Expected vertices_pred and vertices_gt to have same vertex and coordinate dimensions but got "
            f"shapes {tuple(vertices_pred.shape)} and {tuple(vertices_gt.shape)}."
        )
    if vertices_pred.device != vertices_gt.device:
        raise ValueError(
            f"Expected `vertices_gt` on the device of `vertices_pred` ({vertices_pred.device}), "
            f"got {vertices_gt.device}"
        )
    v = vertices_pred.shape[1]
    if max(mouth_map) >= v or min(mouth_map) < -v:
        raise ValueError(
            f"mouth_map contains invalid vertex indices: they must lie in [-{v}, {v}) for {v} vertices, got "
            f"{min(mouth_map)} to {max(mouth_map)}."
        )
    lip_errors(out, vertices_pred, vertices_gt, _lip_index(mouth_map, v, out.device))
    return min(vertices_pred.shape[0], vertices_gt.shape[0])


@functools.lru_cache(maxsize=64)
def _lip_index(mouth_map: Tuple[int, ...], vertices: int, device: torch.device) -> Tensor:
    """The lip vertices' indices (negative ones from the end) as an int64 tensor on ``device``,
    made once per mouth map, vertex count and device (the kernel only reads it)."""
    return torch.tensor([i % vertices for i in mouth_map], dtype=torch.int64, device=device)


def lip_vertex_error(vertices_pred: Tensor, vertices_gt: Tensor, mouth_map: Any, validate_args: bool = True) -> Tensor:
    """Lip Vertex Error: over the first min(T, T') frames of ``vertices_pred`` [T, V, 3] and
    ``vertices_gt`` [T', V, 3], the mean of each frame's largest squared L2 distance between the
    predicted and true positions of the vertices ``mouth_map`` lists. The result is in the
    inputs' (promoted) dtype, computed in float64; NaN over no frame.

    Differences from torchmetrics: float64 arithmetic; the checks run also with
    ``validate_args=False`` (accepted and ignored), and integer inputs, NaN / inf vertices and
    indices below -V raise as well; no gradient.

        >>> import torch
        >>> from torchtally.functional.multimodal import lip_vertex_error
        >>> pred = torch.zeros(2, 4, 3)
        >>> gt = torch.zeros(2, 4, 3)
        >>> gt[0, 1, 0], gt[1, 2, 2] = 2.0, 1.0
        >>> lip_vertex_error(pred, gt, mouth_map=[1, 2])
        tensor(2.5000)
    """
    mouth = checked_mouth_map(mouth_map)
    device = vertices_pred.device if isinstance(vertices_pred, Tensor) else None
    total = torch.zeros((), dtype=torch.float64, device=device)
    frames = add_frame_errors(total, vertices_pred, vertices_gt, mouth)
    dtype = torch.promote_types(vertices_pred.dtype, vertices_gt.dtype)
    return (total / frames if frames else torch.full((), math.nan, dtype=torch.float64)).to(dtype)
