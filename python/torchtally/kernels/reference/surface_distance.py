"""Torch reference of the surface-distance kernel (csrc/API.md, "Surface distance").

An edge pixel of a 2-D mask is a pixel of the mask with one of its 4 neighbours outside the mask
or outside the image (torchmetrics' erosion by a cross). Per sample and class, the directed
distance from edges A to edges B is max over a in A of min over b in B of d(a, b), with d
euclidean, chessboard (max of the axis distances) or taxicab (their sum), the row and column
offsets scaled by the spacing; undirected is the larger of both directions. One mask empty and
the other not: inf; both empty: NaN.

Computed exactly, in float64, with torch ops: per image, the column distance of every pixel to
the nearest target edge in its row (two cumulative-max scans), then for each predicted edge
pixel the minimum over the rows of d(row offset, that column distance), in chunks of bounded
memory. The euclidean distance is the square root of the largest squared one, taken once with
Python's correctly rounded ``math.sqrt`` (torch's vectorised float64 square root can be 1 ulp
off), so the C core and this reference agree to the bit.
"""

import math
from typing import Tuple

import torch
from torch import Tensor

from . import checks as chk

METRICS = ("euclidean", "chessboard", "taxicab")
_CHUNK = 1 << 22  # elements of one [rows, edge pixels] block
_MASKS = "a bool or integer tensor [N, C, H, W]"


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
            d = dr * dr + dc * dc  # squared: one correctly rounded square root at the end
        elif metric == "chessboard":
            d = torch.maximum(dr, dc)
        else:
            d = dr + dc
        worst = max(worst, float(d.min(dim=0).values.max()))
    return math.sqrt(worst) if metric == "euclidean" else worst


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


def _spacing(name: str, v: object) -> float:
    value = chk.float_value(name, v)
    if not (value > 0 and math.isfinite(value)):
        raise ValueError(f"{name}: expected a positive finite number, got {value:g}")
    return value


def surface_distance(out, preds, target, metric, row_spacing, col_spacing, directed, /) -> None:
    """out float64 [N, C] = the Hausdorff distance between the edges of preds[n, c] and target[n, c]."""
    chk.no_meta(("preds", preds), ("target", target))
    out = chk.tensor("out", out)
    preds = chk.labels("preds", preds, out, _MASKS, lambda s: len(s) == 4)
    target = chk.labels("target", target, out, _MASKS, lambda s: len(s) == 4)
    if target.shape != preds.shape:
        raise ValueError(f"target: expected the shape of preds ({chk.describe(preds)}), got {chk.describe(target)}")
    m = chk.index_value("metric", metric, allow_none=False)
    if m is None or not 0 <= m <= 2:
        raise ValueError(f"metric: expected 0 (euclidean), 1 (chessboard) or 2 (taxicab), got {m}")
    spacing = (_spacing("row_spacing", row_spacing), _spacing("col_spacing", col_spacing))
    n, k = preds.shape[:2]
    expected = f"a float64 tensor of shape [{n}, {k}]"
    out = chk.output("out", out, torch.float64, expected, (2,))
    if tuple(out.shape) != (n, k):
        chk.fail("out", out, expected, True)
    values = torch.empty(n, k, dtype=torch.float64)
    for i in range(n):
        for j in range(k):
            values[i, j] = pair_distance(preds[i, j], target[i, j], METRICS[m], spacing, bool(directed))
    out.copy_(values)
