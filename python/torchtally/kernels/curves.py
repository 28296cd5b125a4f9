"""The exact curve kernels' routes (csrc/API_CURVES.md): the C core for CPU tensors, the torch
reference (kernels.reference.exact_curve) elsewhere. Both read an exact curve metric's cat state
at compute (a custom op while dynamo traces, as every kernel)."""

from typing import List, Optional, Tuple

import torch
from torch import Tensor

from . import host_module, ops

# How a column's labels read: the task codes of csrc/kernels/exact_curve.h.
TASK_CODES = {"binary": 0, "multiclass": 1, "multilabel": 2}
# exact_curve_finish's readouts (csrc/kernels/binned_finish.h, exact_curve.h).
AUROC, AVERAGE_PRECISION, EER, SENSITIVITY_AT_SPECIFICITY, SPECIFICITY_AT_SENSITIVITY, RECALL_AT_PRECISION = range(6)


def exact_curve_points(points: Tensor, size: Tensor, scores: Tensor, labels: Tensor, task: int, column: int) -> None:
    """points float64 [3, N] rows (threshold, tp, fp) of column ``column``'s distinct scores,
    descending; size int64 [1] = how many (scores float32 [N, K])."""
    if ops.compiling():
        return ops.exact_curve_points(points, size, scores, labels, task, column)
    host_module(points).exact_curve_points(points, size, scores, labels, task, column)


# exact_curve_rates' curve kinds (csrc/kernels/exact_curve.h).
ROC, PR_NAN_RECALL, PR_UNIT_RECALL = range(3)


def exact_curve_rates(curves: Tensor, sizes: Tensor, scores: Tensor, labels: Tensor, task: int, kind: int) -> None:
    """curves float32 [K, 3, N + 1] = per column the float32 ROC (kind 0: fpr, tpr, thresholds)
    or precision-recall curve (1, 2: precision, recall, thresholds); sizes int64 [K, 3] =
    (points, positives, negatives)."""
    if ops.compiling():
        return ops.exact_curve_rates(curves, sizes, scores, labels, task, kind)
    host_module(curves).exact_curve_rates(curves, sizes, scores, labels, task, kind)


def exact_curve_finish(out: Tensor, scores: Tensor, labels: Tensor, task: int, metric: int, level: float = 0.0) -> None:
    """out float64 [K, 4] = per column (readout, positives, negatives, threshold): AUROC (metric
    0), average precision (1), EER (2), sensitivity at specificity >= level (3) or specificity
    at sensitivity >= level (4) or recall at precision >= level (5), the last three with their
    threshold (NaN for the others)."""
    if ops.compiling():
        return ops.exact_curve_finish(out, scores, labels, task, metric, level)
    host_module(out).exact_curve_finish(out, scores, labels, task, metric, level)


def curve_rows(
    scores: Tensor,
    labels: Tensor,
    size: Tensor,
    preds: Tensor,
    target: Tensor,
    task: int,
    ignore_index: Optional[int],
    convert: bool,
) -> None:
    """One update batch stored as it is: scores float32 and labels (the state's dtypes) receive
    the kept rows, size int64 [1] how many; -1 and nothing written for a batch that needs the
    general path (a NaN, a label out of range, ``convert`` and a score outside [0, 1])."""
    if ops.compiling():
        return ops.curve_rows(scores, labels, size, preds, target, task, ignore_index, convert)
    host_module(scores).curve_rows(scores, labels, size, preds, target, task, ignore_index, convert)


def column_points(scores: Tensor, labels: Tensor, task: int, column: int) -> Tuple[Tensor, Tensor, Tensor]:
    """(thresholds float32 [M], tp float64 [M], fp float64 [M]) of one column, thresholds descending."""
    n = scores.shape[0]
    points = torch.empty(3, n, dtype=torch.float64, device=scores.device)
    size = torch.empty(1, dtype=torch.int64, device=scores.device)
    exact_curve_points(points, size, scores, labels, task, column)
    m = int(size)
    return points[0, :m].to(torch.float32), points[1, :m], points[2, :m]


def curve_buffer(scores: Tensor, labels: Tensor, task: int, kind: int) -> Tuple[Tensor, Tensor]:
    """exact_curve_rates into new tensors: (curves float32 [K, 3, N + 1], sizes int64 [K, 3])."""
    n, k = scores.shape
    curves = torch.empty(k, 3, n + 1, dtype=torch.float32, device=scores.device)
    sizes = torch.empty(k, 3, dtype=torch.int64, device=scores.device)
    exact_curve_rates(curves, sizes, scores, labels, task, kind)
    return curves, sizes


def column_curves(
    scores: Tensor, labels: Tensor, task: int, kind: int
) -> Tuple[List[Tuple[Tensor, Tensor, Tensor]], Tensor]:
    """(per column (x, y, thresholds) float32, sizes int64 [K, 3] (points, positives,
    negatives)) of exact_curve_rates: ROC (fpr, tpr, thresholds) or PR (precision, recall,
    thresholds), views of one buffer."""
    curves, sizes = curve_buffer(scores, labels, task, kind)
    lengths = sizes[:, 0].tolist()
    out = []
    for column, m in enumerate(lengths):
        c = curves[column]
        # ROC: M + 1 points with the origin; PR: M + 1 with the end point, M thresholds
        t = c[2, : m + 1] if kind == ROC else c[2, :m]
        out.append((c[0, : m + 1], c[1, : m + 1], t))
    return out, sizes
