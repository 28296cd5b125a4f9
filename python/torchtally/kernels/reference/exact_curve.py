"""Torch reference of the exact curve kernels (csrc/API_CURVES.md).

A column's counted samples (task 0 binary: labels [N], positive where 1; 1 multiclass: class ids
[N], positive in column k where label == k; 2 multilabel: labels [N, K], 2 ignored, positive
where 1) sorted by score, descending (NaN first, as torch.sort); one point per run of equal
scores (each NaN its own) with the cumulative true / false positives at its last sample.
Every check runs before an output is written.
"""

from typing import Tuple

import torch
from torch import Tensor

from . import checks as chk

F64 = torch.float64
TASKS = (0, 1, 2)
AUROC, AVERAGE_PRECISION, EER, SENSITIVITY_AT_SPECIFICITY, SPECIFICITY_AT_SENSITIVITY, RECALL_AT_PRECISION = range(6)
METRICS = (0, 1, 2, 3, 4, 5)


def column_points(scores: Tensor, labels: Tensor, task: int, column: int) -> Tuple[Tensor, Tensor, Tensor]:
    """(thresholds float32 [M], tp float64 [M], fp float64 [M]) of one column, thresholds descending."""
    values = scores[:, column]
    if task == 2:
        keep = labels[:, column] != 2
        values, positive = values[keep], labels[keep, column] == 1
    else:
        positive = labels.to(torch.int64) == (column if task == 1 else 1)
    values, order = torch.sort(values, descending=True, stable=True)
    tp = positive[order].to(F64).cumsum(0)
    fp = torch.arange(1, values.numel() + 1, dtype=F64, device=values.device) - tp
    last = torch.ones_like(values, dtype=torch.bool)  # the last sample of its run of equal scores
    last[:-1] = values[1:] != values[:-1]
    return values[last], tp[last], fp[last]


def _roc32(thresholds: Tensor, tp: Tensor, fp: Tensor) -> Tuple[Tensor, Tensor, Tensor]:
    """The float32 ROC curve from the origin (threshold 1), as compute.py returns it."""
    pos = float(tp[-1]) if tp.numel() else 0.0
    neg = float(fp[-1]) if fp.numel() else 0.0
    zero = torch.zeros(1, dtype=F64, device=tp.device)
    fpr = torch.cat([zero, fp / neg if neg > 0 else torch.zeros_like(fp)]).to(torch.float32)
    tpr = torch.cat([zero, tp / pos if pos > 0 else torch.zeros_like(tp)]).to(torch.float32)
    one = torch.ones(1, dtype=thresholds.dtype, device=thresholds.device)
    return fpr, tpr, torch.cat([one, thresholds])


def _recall_at_precision(
    thresholds: Tensor, tp: Tensor, fp: Tensor, level: float, nan_recall: bool
) -> Tuple[float, float]:
    """(recall, threshold) on the float32 precision-recall curve (thresholds ascending, the end
    point left out): the largest recall among the points with precision >= level, ties broken
    by the larger precision, then the larger threshold; (0, NaN) where none qualifies, one that
    does has no recall (NaN), or the recall is 0."""
    pos = float(tp[-1]) if tp.numel() else 0.0
    precision = (tp / (tp + fp)).to(torch.float32).flip(0)
    if pos > 0:
        recall = (tp / pos).to(torch.float32).flip(0)
    else:
        recall = torch.full_like(precision, float("nan") if nan_recall else 1.0)
    t = thresholds.flip(0)
    ok = (precision >= level).nonzero().flatten()
    if ok.numel() == 0 or bool(torch.isnan(recall[ok]).any()):
        return 0.0, float("nan")
    keys = torch.stack([recall[ok].double(), precision[ok].double(), t[ok].double()], 1).tolist()
    best = max(range(len(keys)), key=lambda i: (keys[i], -i))  # the first of the largest
    value = float(recall[ok[best]])
    return value, float("nan") if value == 0 else float(t[ok[best]])


def column_readout(
    thresholds: Tensor, tp: Tensor, fp: Tensor, metric: int, level: float, nan_recall: bool = False
) -> Tuple[float, float, float, float]:
    """(value, positives, negatives, threshold) from a column's points."""
    pos = float(tp[-1]) if tp.numel() else 0.0
    neg = float(fp[-1]) if fp.numel() else 0.0
    nan = float("nan")
    if metric == AUROC:
        if pos == 0 or neg == 0:
            return nan, pos, neg, nan
        zero = torch.zeros(1, dtype=F64, device=tp.device)
        fpr, tpr = torch.cat([zero, fp / neg]), torch.cat([zero, tp / pos])
        return float(torch.trapezoid(tpr, fpr)), pos, neg, nan
    if metric == AVERAGE_PRECISION:
        if pos == 0:
            return 0.0, pos, neg, nan
        prev = torch.cat([torch.zeros(1, dtype=F64, device=tp.device), tp[:-1]])
        return float(((tp - prev) * (tp / (tp + fp))).sum() / pos), pos, neg, nan
    if metric == RECALL_AT_PRECISION:
        recall, threshold = _recall_at_precision(thresholds, tp, fp, level, nan_recall)
        return recall, pos, neg, threshold
    fpr, tpr, t = _roc32(thresholds, tp, fp)
    if metric == EER:
        fnr = 1 - tpr
        i = torch.argmin(torch.abs(fpr - fnr))  # the first of equal gaps
        return float((fpr[i] + fnr[i]) / 2), pos, neg, nan
    if metric == SENSITIVITY_AT_SPECIFICITY:
        value, condition = tpr, (1 - fpr) >= level
    else:
        value, condition = 1 - fpr, tpr >= level
    ok = condition.nonzero().flatten()
    if ok.numel() == 0:
        return 0.0, pos, neg, 1e6
    best = int(ok[torch.argmax(value[ok])])  # the first of equal values
    return float(value[best]), pos, neg, float(t[best])


def _inputs(out: Tensor, scores: object, labels: object, task: object) -> Tuple[Tensor, Tensor, int]:
    if isinstance(task, bool) or not isinstance(task, int) or task not in TASKS:
        raise ValueError(f"task: expected 0 (binary), 1 (multiclass) or 2 (multilabel), got {task!r}")
    chk.no_meta(("scores", scores), ("labels", labels))
    s = chk.scores("scores", scores, out, "float32 [N, K]", lambda shape: len(shape) == 2)
    if s.dtype != torch.float32:
        chk.fail("scores", s, "float32 [N, K]", False)
    if s.shape[0] >= 2**31:
        raise ValueError(f"scores: expected fewer than 2^31 samples, got {s.shape[0]}")
    if task == 0 and s.shape[1] != 1:
        raise ValueError(f"scores: expected one column for a binary task, got {chk.describe(s)}")
    dims = 2 if task == 2 else 1
    lab = chk.labels("labels", labels, out, f"a {dims}-D tensor of labels", lambda shape: len(shape) == dims)
    if lab.shape[0] != s.shape[0] or (dims == 2 and lab.shape[1] != s.shape[1]):
        want = "[N, K]" if dims == 2 else "[N]"
        raise ValueError(f"labels: expected {want} rows as scores {chk.describe(s)}, got {chk.describe(lab)}")
    return s, lab, task


def exact_curve_points(points, size, scores, labels, task, column, /) -> None:
    """points float64 [3, N] rows (threshold, tp, fp) of column `column`; size int64 [1] = M."""
    points = chk.tensor("points", points)
    s, lab, task = _inputs(points, scores, labels, task)
    k = s.shape[1]
    if isinstance(column, bool) or not isinstance(column, int) or not 0 <= column < k:
        raise ValueError(f"column: expected a column in [0, {k}), got {column!r}")
    n = s.shape[0]
    points = chk.output("points", points, F64, f"float64 [3, {n}]", (2,))
    if tuple(points.shape) != (3, n):
        chk.fail("points", points, f"float64 [3, {n}]", True)
    size = chk.output("size", size, torch.int64, "int64 [1]", (1,))
    if size.numel() != 1:
        chk.fail("size", size, "int64 [1]", True)
    thresholds, tp, fp = column_points(s, lab, task, column)
    m = thresholds.numel()
    points[0, :m] = thresholds.to(F64)
    points[1, :m] = tp
    points[2, :m] = fp
    size.fill_(m)


def column_curve(thresholds: Tensor, tp: Tensor, fp: Tensor, kind: int) -> Tuple[Tensor, Tensor, Tensor]:
    """The float32 curve of a column's points: ROC (kind 0) from the origin at threshold 1, or the
    precision-recall curve (thresholds ascending, then the end point recall 0, precision 1; a
    column without positives has recall NaN for kind 1, 1 for kind 2)."""
    pos = float(tp[-1]) if tp.numel() else 0.0
    if kind == 0:
        return _roc32(thresholds, tp, fp)
    precision = (tp / (tp + fp)).to(torch.float32).flip(0)
    if pos > 0:
        recall = (tp / pos).to(torch.float32).flip(0)
    else:
        recall = torch.full_like(precision, float("nan") if kind == 1 else 1.0)
    one, zero = precision.new_ones(1), precision.new_zeros(1)
    return torch.cat([precision, one]), torch.cat([recall, zero]), thresholds.flip(0)


def exact_curve_rates(curves, sizes, scores, labels, task, kind, /) -> None:
    """curves float32 [K, 3, N + 1] = per column the float32 curve's rows; sizes int64 [K, 3] =
    (points, positives, negatives)."""
    curves = chk.tensor("curves", curves)
    s, lab, task = _inputs(curves, scores, labels, task)
    if isinstance(kind, bool) or not isinstance(kind, int) or kind not in (0, 1, 2):
        raise ValueError(
            "kind: expected 0 (ROC), 1 (PR, recall NaN without positives) or 2 (PR, recall 1 without "
            f"positives), got {kind!r}"
        )
    n, k = s.shape
    curves = chk.output("curves", curves, torch.float32, f"float32 [{k}, 3, {n + 1}]", (3,))
    if tuple(curves.shape) != (k, 3, n + 1):
        chk.fail("curves", curves, f"float32 [{k}, 3, {n + 1}]", True)
    sizes = chk.output("sizes", sizes, torch.int64, f"int64 [{k}, 3]", (2,))
    if tuple(sizes.shape) != (k, 3):
        chk.fail("sizes", sizes, f"int64 [{k}, 3]", True)
    for column in range(k):
        thresholds, tp, fp = column_points(s, lab, task, column)
        for row, values in enumerate(column_curve(thresholds, tp, fp, kind)):
            curves[column, row, : values.numel()] = values
        pos = int(tp[-1]) if tp.numel() else 0
        sizes[column] = torch.tensor([thresholds.numel(), pos, thresholds.numel() and int(fp[-1])])


def exact_curve_finish(out, scores, labels, task, metric, level, /) -> None:
    """out float64 [K, 4] = per column (readout `metric`, positives, negatives, threshold)."""
    out = chk.tensor("out", out)
    s, lab, task = _inputs(out, scores, labels, task)
    if isinstance(metric, bool) or metric not in METRICS:
        raise ValueError(
            "metric: expected 0 (AUROC), 1 (average precision), 2 (EER), 3 (sensitivity at specificity), "
            f"4 (specificity at sensitivity) or 5 (recall at precision), got {metric!r}"
        )
    if isinstance(level, bool) or not isinstance(level, (float, int)):
        raise TypeError(f"level: expected a float, got {type(level).__name__}")
    if metric >= SENSITIVITY_AT_SPECIFICITY and not 0 <= level <= 1:
        raise ValueError(f"level: expected a rate in [0, 1], got {level}")
    k = s.shape[1]
    out = chk.output("out", out, F64, f"float64 [{k}, 4]", (2,))
    if tuple(out.shape) != (k, 4):
        chk.fail("out", out, f"float64 [{k}, 4]", True)
    nan_recall = task == 1  # a class without positives has no recall; a label's is 1
    rows = [column_readout(*column_points(s, lab, task, column), metric, level, nan_recall) for column in range(k)]
    out.copy_(torch.tensor(rows, dtype=F64).reshape(k, 4))
