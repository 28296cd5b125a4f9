"""``lip_vertex_error`` (torchmetrics.functional.multimodal.lve's names): Lip Vertex Error of
predicted against ground-truth 3D face meshes, the mean over frames of the largest squared L2
distance between corresponding lip vertices. Per-frame errors in float64."""

import functools
import math
from collections.abc import Sequence
from typing import Any, Tuple

import torch
from torch import Tensor

__all__ = ["lip_vertex_error", "checked_mouth_map", "frame_errors", "frame_errors_and_sum"]


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


def frame_errors(vertices_pred: Tensor, vertices_gt: Tensor, mouth_map: Tuple[int, ...]) -> Tensor:
    """The float64 error of each of the first min(T, T') frames: the largest squared distance
    over the ``mouth_map`` vertices. Checks first (TypeError/ValueError naming the argument):
    floating tensors [T, V, C] and [T', V, C], indices within [-V, V), finite values."""
    return frame_errors_and_sum(vertices_pred, vertices_gt, mouth_map)[0]


def frame_errors_and_sum(
    vertices_pred: Tensor, vertices_gt: Tensor, mouth_map: Tuple[int, ...]
) -> Tuple[Tensor, Tensor]:
    """``frame_errors`` and their float64 sum (0-d), which the finiteness check computes anyway."""
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
    frames = min(vertices_pred.shape[0], vertices_gt.shape[0])
    index = _lip_index(mouth_map, v, vertices_pred.device)
    pred, gt = (_lips(t, frames, index) for t in (vertices_pred, vertices_gt))
    squared = (gt - pred).square().sum(dim=-1)  # [frames, lip vertices]
    if squared.shape[1] == 0 or frames == 0:
        return squared.new_zeros(frames), squared.new_zeros(())
    errors = squared.amax(dim=1)
    total = errors.sum()
    # A NaN or inf lip vertex makes its frame's error, and so this sum, NaN or inf (amax keeps NaN):
    # the inputs are searched only then (finite inputs whose squares overflow pass the search).
    if not math.isfinite(total.item()):
        for name, value in (("vertices_pred", pred), ("vertices_gt", gt)):
            if not bool(torch.isfinite(value).all()):
                raise ValueError(f"`{name}` holds NaN or infinite values at the mouth_map vertices")
    return errors, total


def _lips(vertices: Tensor, frames: int, index: Tensor) -> Tensor:
    """The lip vertices of the first ``frames`` frames, float64, detached (no slice where every
    frame counts, no detach where there is no graph: each costs about a tensor op)."""
    if vertices.shape[0] != frames:
        vertices = vertices[:frames]
    if vertices.requires_grad:
        vertices = vertices.detach()
    return vertices.index_select(1, index).to(torch.float64)


@functools.lru_cache(maxsize=64)
def _lip_index(mouth_map: Tuple[int, ...], vertices: int, device: torch.device) -> Tensor:
    """The lip vertices' indices (negative ones from the end) as an int64 tensor on ``device``,
    made once per mouth map, vertex count and device (index_select only reads it)."""
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
    errors = frame_errors(vertices_pred, vertices_gt, checked_mouth_map(mouth_map))
    dtype = torch.promote_types(vertices_pred.dtype, vertices_gt.dtype)
    return errors.mean().to(dtype)
