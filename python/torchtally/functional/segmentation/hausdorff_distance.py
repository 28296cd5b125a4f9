"""hausdorff_distance: the Hausdorff distance between the edges of predicted and target masks.

An edge pixel of a 2-D mask is a pixel of the mask with one of its 4 neighbours outside the mask
or outside the image (torchmetrics' erosion by a cross). Per sample and class, the directed
distance from edges A to edges B is max over a in A of min over b in B of d(a, b), with d
euclidean, chessboard (max of the axis distances) or taxicab (their sum), axis distances
scaled by ``spacing`` (rows, columns); undirected is the larger of both directions.

Computed exactly, in float64, by the surface-distance kernel (torchtally.kernels: the C core
for CPU tensors, every pair of the batch in one call, separable distance transforms; the torch
reference elsewhere). One mask empty and the other not: inf; both empty: NaN.
"""

from typing import List, Optional, Sequence, Tuple, Union

import torch
from torch import Tensor

from ... import kernels
from .counts import check_bool, check_input_format, check_num_classes, formatted

__all__ = ["hausdorff_distance"]

DISTANCE_METRICS = ("euclidean", "chessboard", "taxicab")


def check_distance_metric(metric: object) -> str:
    if metric not in DISTANCE_METRICS:
        raise ValueError(f"distance_metric: expected one of {DISTANCE_METRICS}, got {metric!r}")
    return str(metric)


def check_spacing(spacing: object) -> Tuple[float, float]:
    """(row, column) spacing; None is (1, 1)."""
    if spacing is None:
        return 1.0, 1.0
    if isinstance(spacing, Tensor):
        values: List[object] = spacing.detach().cpu().reshape(-1).tolist()
    elif isinstance(spacing, (list, tuple)):
        values = list(spacing)
    else:
        raise ValueError(f"spacing: expected None, a list or a tensor of 2 numbers, got {type(spacing).__name__}")
    ok = len(values) == 2 and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values)
    if not ok or not all(0 < float(v) < float("inf") for v in values):  # type: ignore[arg-type]
        raise ValueError(f"spacing: expected 2 positive finite numbers (rows, columns), got {spacing!r}")
    return float(values[0]), float(values[1])  # type: ignore[arg-type]


def distances(
    preds: object,
    target: object,
    num_classes: int,
    include_background: bool,
    distance_metric: str,
    spacing: Tuple[float, float],
    directed_: bool,
    input_format: str,
) -> Tensor:
    """float64 [N, C]: one distance per sample and class (checked inputs, background dropped as asked)."""
    kind, p, t, c = formatted(preds, target, num_classes, input_format)
    if kind == "labels":
        classes = torch.arange(c, device=p.device).view(1, c, *([1] * (p.dim() - 1)))
        p, t = p.unsqueeze(1) == classes, t.unsqueeze(1) == classes
    if p.dim() != 4:
        raise ValueError(f"preds: expected 2-D images ([N, C, H, W] one-hot or [N, H, W] index), got {list(p.shape)}")
    if not include_background and c > 1:
        p, t = p[:, 1:], t[:, 1:]
    out = torch.empty(p.shape[:2], dtype=torch.float64, device=p.device)
    metric = DISTANCE_METRICS.index(distance_metric)
    kernels.surface_distance(out, p, t, metric, spacing[0], spacing[1], directed_)
    return out


def hausdorff_distance(
    preds: Tensor,
    target: Tensor,
    num_classes: int,
    include_background: bool = False,
    distance_metric: str = "euclidean",
    spacing: Optional[Union[Tensor, Sequence[float]]] = None,
    directed: bool = False,
    input_format: str = "one-hot",
) -> Tensor:
    """Hausdorff distance between the edges of the predicted and target masks of each sample and
    class, [N, C] (C - 1 without background): inf where one mask is empty, NaN where both are.
    2-D images only.

    >>> import torch
    >>> from torchtally.functional.segmentation import hausdorff_distance
    >>> preds = torch.zeros(1, 6, 6, dtype=torch.long)
    >>> target = torch.zeros(1, 6, 6, dtype=torch.long)
    >>> preds[0, 1:3, 1:3] = 1
    >>> target[0, 2:5, 2:5] = 1
    >>> hausdorff_distance(preds, target, num_classes=2, input_format="index")
    tensor([[2.8284]])
    >>> hausdorff_distance(preds, target, num_classes=2, distance_metric="taxicab", input_format="index")
    tensor([[4.]])
    """
    check_num_classes(num_classes)
    check_bool("include_background", include_background)
    metric = check_distance_metric(distance_metric)
    steps = check_spacing(spacing)
    check_bool("directed", directed)
    input_format = check_input_format(input_format)
    result = distances(preds, target, num_classes, include_background, metric, steps, directed, input_format)
    return result.to(torch.get_default_dtype())
