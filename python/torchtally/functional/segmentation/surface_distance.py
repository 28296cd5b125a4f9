"""hausdorff_distance: the Hausdorff distance between the edges of predicted and target masks.

An edge pixel of a 2-D mask is a pixel of the mask with one of its 4 neighbours outside the mask
or outside the image (torchmetrics' erosion by a cross). Per sample and class, the directed
distance from edges A to edges B is max over a in A of min over b in B of d(a, b), with d
euclidean, chessboard (max of the axis distances) or taxicab (their sum), axis distances
scaled by ``spacing`` (rows, columns); undirected is the larger of both directions.

Computed exactly, in float64, with torch ops (no C kernel): per image, the column distance of
every pixel to the nearest target edge in its row (two cumulative-max scans), then for each
predicted edge pixel the minimum over the rows of d(row offset, that column distance), in
chunks of bounded memory. One mask empty and the other not: inf; both empty: NaN.
"""

from typing import List, Optional, Sequence, Tuple, Union

import torch
from torch import Tensor

from .counts import check_bool, check_input_format, check_num_classes, formatted

__all__ = ["hausdorff_distance"]

DISTANCE_METRICS = ("euclidean", "chessboard", "taxicab")
_CHUNK = 1 << 22  # elements of one [rows, edge pixels] block


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


def edges(masks: Tensor) -> Tensor:
    """bool [..., H, W]: the pixels of ``masks`` with a 4-neighbour outside the mask or the image."""
    m = masks.bool()
    padded = torch.nn.functional.pad(m, (1, 1, 1, 1), value=False)
    inner = padded[..., :-2, 1:-1] & padded[..., 2:, 1:-1] & padded[..., 1:-1, :-2] & padded[..., 1:-1, 2:]
    return m & ~inner


def _row_gaps(target_edges: Tensor) -> Tensor:
    """float64 [H, W]: column distance (in pixels) to the nearest edge pixel in the same row, inf if none."""
    h, w = target_edges.shape
    cols = torch.arange(w, device=target_edges.device).expand(h, w)
    none = torch.full_like(cols, -(w + 1))
    left = torch.where(target_edges, cols, none).cummax(dim=1).values
    right = torch.where(target_edges, w - 1 - cols, none).flip(1).cummax(dim=1).values.flip(1)
    gap = torch.minimum(cols - left, (w - 1 - right) - cols).double()
    return torch.where(gap > w, float("inf"), gap)


def directed(from_edges: Tensor, to_edges: Tensor, metric: str, spacing: Tuple[float, float]) -> float:
    """max over the pixels of ``from_edges`` of the distance to the nearest pixel of ``to_edges`` (both non-empty)."""
    gaps = _row_gaps(to_edges) * spacing[1]
    rows, cols = torch.nonzero(from_edges, as_tuple=True)
    h = to_edges.shape[0]
    offsets = torch.arange(h, device=to_edges.device, dtype=torch.float64).view(h, 1)
    step = max(1, _CHUNK // max(h, 1))
    worst = 0.0
    for start in range(0, rows.numel(), step):
        r, c = rows[start : start + step], cols[start : start + step]
        dr = (offsets - r.view(1, -1)).abs() * spacing[0]
        dc = gaps[:, c]
        if metric == "euclidean":
            d = torch.sqrt(dr * dr + dc * dc)
        elif metric == "chessboard":
            d = torch.maximum(dr, dc)
        else:
            d = dr + dc
        worst = max(worst, float(d.min(dim=0).values.max()))
    return worst


def pair_distance(pred: Tensor, target: Tensor, metric: str, spacing: Tuple[float, float], one_way: bool) -> float:
    """The (directed, with ``one_way``) Hausdorff distance between the edges of two 2-D masks."""
    pe, te = edges(pred), edges(target)
    has_p, has_t = bool(pe.any()), bool(te.any())
    if not (has_p or has_t):
        return float("nan")
    if not (has_p and has_t):
        return float("inf")
    d = directed(pe, te, metric, spacing)
    return d if one_way else max(d, directed(te, pe, metric, spacing))


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
    n, k = p.shape[:2]
    out = torch.empty(n, k, dtype=torch.float64)
    for i in range(n):
        for j in range(k):
            out[i, j] = pair_distance(p[i, j], t[i, j], distance_metric, spacing, directed_)
    return out.to(p.device)


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
