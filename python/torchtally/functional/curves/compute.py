"""compute() of the curve metrics from their state (see update.py for the state layout).

Each function takes the CurveTask and the states {"hist": ...} (binned) or {"scores": ...,
"labels": ...} (exact) and is shared by the functional forms and the metric classes.

Both modes reduce to Counts: cumulative true/false positives at thresholds in DESCENDING
order, one row per column (class or label).

* binned: from the histogram hist[k, bin, is_positive] (bin b holds scores with exactly b
  thresholds <= score). "score >= thresholds[i]" <=> bin > i, so TP(i) is the suffix sum of
  the positive counts over bins i+1 .. T. Every threshold is a point; the curve does not start
  at the origin (as torchmetrics' binned mode).
* exact: the scores sorted descending; one point per distinct score (ties form one step, as
  scikit-learn), preceded by the origin (0, 0) for ROC.

Values are computed in float64 and returned as float32 (torchmetrics' result dtype).
"""

import functools
import warnings
from typing import Dict, List, NamedTuple, Optional, Tuple, Union

import torch
import torch.nn.functional as F
from torch import Tensor

from ... import kernels
from ...kernels import curves as curve_kernels
from .update import CurveTask

OUT_DTYPE = torch.float32


class Counts(NamedTuple):
    tp: Tensor  # [R, M] float64, cumulative true positives at descending thresholds
    fp: Tensor  # [R, M] float64, cumulative false positives
    pos: Tensor  # [R] float64, positives (TP at -inf)
    neg: Tensor  # [R] float64, negatives
    thresholds: Tensor  # [M], descending
    exact: bool  # exact mode: origin point for ROC, recall 1 without positives (scikit-learn)


def binned_counts(hist: Tensor, thresholds: Tensor) -> Counts:
    """Counts of a histogram [R, T + 1, 2] with bin edges `thresholds` [T] (ascending)."""
    suffix = hist.flip(1).cumsum(1).flip(1).double()  # suffix[:, b] = sum over bins >= b
    tp = suffix[:, 1:, 1].flip(1)
    fp = suffix[:, 1:, 0].flip(1)
    return Counts(tp, fp, suffix[:, 0, 1], suffix[:, 0, 0], thresholds.flip(0), False)


def exact_counts(thresholds: Tensor, tp: Tensor, fp: Tensor) -> Counts:
    """Counts of one column from its points (kernels.curves.column_points)."""
    if not tp.numel():
        zero = torch.zeros(1, dtype=torch.float64, device=tp.device)
        return Counts(tp[None], fp[None], zero, zero, thresholds, True)
    return Counts(tp[None], fp[None], tp[-1:], fp[-1:], thresholds, True)


def _ratio(num: Tensor, den: Tensor, if_zero: float) -> Tensor:
    """num / den, `if_zero` where den == 0 (den broadcasts against num)."""
    den = den.expand_as(num)
    return torch.where(den > 0, num / den.clamp(min=1), torch.full_like(num, if_zero))


def _column_ratio(num: Tensor, den: Tensor, if_zero: float) -> Tensor:
    """_ratio for one exact column (den [1] on the host): the same float64 division, fewer ops."""
    d = float(den)
    return num / d if d > 0 else torch.full_like(num, if_zero)


def roc_rates(c: Counts) -> Tuple[Tensor, Tensor, Tensor]:
    """(fpr, tpr, thresholds) in float64; 0 where a rate is undefined (as torchmetrics)."""
    if c.exact and c.tp.shape[0] == 1 and c.tp.is_cpu:
        # one column: the rates, each with the origin put in front by one pad
        fpr = F.pad(_column_ratio(c.fp, c.neg, 0.0), (1, 0))
        tpr = F.pad(_column_ratio(c.tp, c.pos, 0.0), (1, 0))
        return fpr, tpr, F.pad(c.thresholds, (1, 0), value=1.0)
    fpr = _ratio(c.fp, c.neg[:, None], 0.0)
    tpr = _ratio(c.tp, c.pos[:, None], 0.0)
    thresholds = c.thresholds
    if c.exact:  # start at the origin, at a threshold above every probability
        origin = torch.zeros(fpr.shape[0], 1, dtype=fpr.dtype, device=fpr.device)
        fpr, tpr = torch.cat([origin, fpr], 1), torch.cat([origin, tpr], 1)
        thresholds = torch.cat([torch.ones(1, dtype=thresholds.dtype, device=thresholds.device), thresholds])
    return fpr, tpr, thresholds


def pr_curve(c: Counts, recall_if_no_positive: float = float("nan")) -> Tuple[Tensor, Tensor, Tensor]:
    """(precision, recall, thresholds): thresholds ascending, then the point (recall 0, precision 1).

    Undefined values: precision 0/0 is NaN (binned mode: no score at or above the threshold), as
    torchmetrics; recall without a positive is `recall_if_no_positive` (see precision_recall_curve_from).
    """
    nan = float("nan")
    if c.exact and c.tp.shape[0] == 1 and c.tp.is_cpu:
        # one column: every exact point holds a sample (tp + fp >= 1); the end point by one pad
        precision = (c.tp / (c.tp + c.fp)).flip(1)
        recall = _column_ratio(c.tp, c.pos, recall_if_no_positive).flip(1)
        return F.pad(precision, (0, 1), value=1.0), F.pad(recall, (0, 1)), c.thresholds.flip(0)
    precision = _ratio(c.tp, c.tp + c.fp, nan)
    recall = _ratio(c.tp, c.pos[:, None], recall_if_no_positive)
    ones = torch.ones(precision.shape[0], 1, dtype=precision.dtype, device=precision.device)
    precision = torch.cat([precision.flip(1), ones], 1)
    recall = torch.cat([recall.flip(1), torch.zeros_like(ones)], 1)
    return precision, recall, c.thresholds.flip(0)


def auroc(c: Counts) -> Tensor:
    """[R] trapezoidal area under the ROC curve; NaN for a column without positives or negatives."""
    fpr, tpr, _ = roc_rates(c)
    area = torch.trapezoid(tpr, fpr, dim=1)
    return torch.where((c.pos > 0) & (c.neg > 0), area, torch.full_like(area, float("nan")))


def partial_auroc(c: Counts, max_fpr: float) -> Tensor:
    """[1] McClish-standardised area up to fpr = max_fpr (one column), as scikit-learn's max_fpr."""
    fpr, tpr, _ = roc_rates(c)
    fpr, tpr = fpr[0], tpr[0]
    if not (c.pos > 0).all() or not (c.neg > 0).all():
        return torch.full((1,), float("nan"), dtype=torch.float64, device=fpr.device)
    if max_fpr == 1 or fpr.sum() == 0 or tpr.sum() == 0:
        return auroc(c)
    stop = int((fpr <= max_fpr).sum())  # fpr is non-decreasing
    if stop == 0:
        area = fpr.new_zeros(())
    else:
        if stop < fpr.numel():  # interpolate the tpr at max_fpr
            w = (max_fpr - fpr[stop - 1]) / (fpr[stop] - fpr[stop - 1])
            end = tpr[stop - 1] + w * (tpr[stop] - tpr[stop - 1])
        else:
            end = tpr[-1]
        x = torch.cat([fpr[:stop], fpr.new_full((1,), max_fpr)])
        y = torch.cat([tpr[:stop], end.reshape(1)])
        area = torch.trapezoid(y, x)
    min_area = 0.5 * max_fpr**2
    return (0.5 * (1 + (area - min_area) / (max_fpr - min_area))).reshape(1)


def average_precision(c: Counts) -> Tensor:
    """[R] sum over thresholds (descending) of (recall step) * precision; 0 without positives."""
    prev = torch.cat([torch.zeros_like(c.tp[:, :1]), c.tp[:, :-1]], 1)
    precision = _ratio(c.tp, c.tp + c.fp, 0.0)
    steps = ((c.tp - prev) * precision).sum(1)
    return _ratio(steps, c.pos, 0.0)


def warn_undefined(values: Tensor, what: str, columns: Optional[str]) -> None:
    """One warning naming the columns whose value is NaN (undefined)."""
    bad = torch.isnan(values).nonzero().flatten().tolist()
    if bad:
        where = f" for {columns} {bad}" if columns else ""
        warnings.warn(f"{what} is undefined (NaN){where}: no positive or no negative sample", UserWarning, stacklevel=3)


def warn_no_positive(
    pos: Tensor, what: str, columns: Optional[str], consequence: str = "its value is 0", stacklevel: int = 3
) -> None:
    """One warning naming the columns without a positive sample."""
    bad = (pos == 0).nonzero().flatten().tolist()
    if bad:
        where = f" for {columns} {bad}" if columns else ""
        warnings.warn(f"{what}: no positive sample{where}; {consequence}", UserWarning, stacklevel=stacklevel)


def warn_no_negative(neg: Tensor, what: str, columns: Optional[str], stacklevel: int = 3) -> None:
    """One warning naming the columns without a negative sample (their FPR is 0 throughout)."""
    bad = (neg == 0).nonzero().flatten().tolist()
    if bad:
        where = f" for {columns} {bad}" if columns else ""
        warnings.warn(f"{what}: no negative sample{where}; its FPR is 0", UserWarning, stacklevel=stacklevel)


def reduce_average(values: Tensor, average: Optional[str], weights: Tensor) -> Tensor:
    """None: per column; "macro": mean of the defined (non-NaN) columns; "weighted": their mean
    weighted by `weights` (support), 0 when those weights sum to 0 (as torchmetrics)."""
    if average is None:
        return values.to(OUT_DTYPE)
    ok = ~torch.isnan(values)
    if not ok.any():
        return torch.tensor(float("nan"), dtype=OUT_DTYPE, device=values.device)
    if average == "macro":
        return values[ok].mean().to(OUT_DTYPE)
    w = weights[ok].to(values.dtype)
    total = w.sum()
    out = (values[ok] * w).sum() / total if total > 0 else total * 0
    return out.to(OUT_DTYPE)


def interp(x: Tensor, xp: Tensor, fp: Tensor) -> Tensor:
    """Piecewise-linear value at x of the polyline (xp, fp), on the segment that starts at the
    k-th point, k = #{xp <= x} - 1 clamped to a valid segment; a vertical segment has slope 0.
    For increasing xp this is plain linear interpolation; the count also defines the value for
    the non-monotone precision of a PR curve (torchmetrics' macro-averaged curves)."""
    if xp.numel() < 2:
        return fp[:1].expand_as(x).clone() if xp.numel() else torch.full_like(x, float("nan"))
    dx = xp[1:] - xp[:-1]
    slope = torch.where(
        dx != 0, (fp[1:] - fp[:-1]) / torch.where(dx != 0, dx, torch.ones_like(dx)), torch.zeros_like(dx)
    )
    known = torch.where(torch.isnan(xp), torch.full_like(xp, float("inf")), xp).sort().values
    count = torch.searchsorted(known, x.contiguous(), right=True)
    count = torch.where(torch.isnan(x), torch.zeros_like(count), count)
    k = (count - 1).clamp(0, dx.numel() - 1)
    return fp[k] + slope[k] * (x - xp[k])


def macro_curve(
    xs: List[Tensor], ys: List[Tensor], thresholds: List[Tensor], descending: bool
) -> Tuple[Tensor, Tensor, Tensor]:
    """Average of per-class curves: every class's y interpolated at the union of all x values."""
    x = torch.cat(xs).sort().values
    y = torch.stack([interp(x, xi, yi) for xi, yi in zip(xs, ys)]).mean(0)
    t = torch.cat(thresholds).sort(descending=descending).values
    return x, y, t


States = Dict[str, Tensor]
Curve = Union[Tuple[Tensor, Tensor, Tensor], Tuple[List[Tensor], List[Tensor], List[Tensor]]]


def counts(task: CurveTask, states: States, micro: bool = False) -> List[Counts]:
    """Binned: one Counts with a row per column. Exact: one single-row Counts per column.
    `micro`: all columns pooled into one binary problem (one Counts, one row).

    Exact mode without a single counted sample raises ValueError: there is no score to make a
    threshold of (torchmetrics raises there too). Binned mode computes from the empty
    histogram, as torchmetrics does."""
    if task.binned:
        hist = states["hist"]
        if micro:
            hist = hist.sum(0, keepdim=True)
        # binned: thresholds set
        return [binned_counts(hist, task.thresholds.values.to(hist.device))]  # type: ignore[union-attr]
    scores, labels, code = exact_layout(task, states, micro)
    points = [curve_kernels.column_points(scores, labels, code, k) for k in range(scores.shape[1])]
    if all(t.numel() == 0 for t, _, _ in points):
        raise _no_sample_error()
    return [exact_counts(*p) for p in points]


def _no_sample_error() -> ValueError:
    return ValueError(
        "compute: no sample to compute from; exact mode (thresholds=None) needs at least one sample "
        "that is not ignored (update() first, or pass thresholds= for the binned mode)"
    )


def exact_layout(task: CurveTask, states: States, micro: bool) -> Tuple[Tensor, Tensor, int]:
    """(scores [N, K] float32, labels, task code) as the exact curve kernels read the state:
    a column per class / label, or (micro) every element pooled into one column."""
    scores, labels = states["scores"], states["labels"]
    if task.task == "binary":
        return scores[:, None], labels, curve_kernels.TASK_CODES["binary"]
    if not micro:
        return scores, labels, curve_kernels.TASK_CODES[task.task]
    if task.task == "multiclass":  # one-hot: each (sample, class) a binary sample
        hot = labels.long()[:, None] == torch.arange(task.num, device=labels.device)
        return scores.reshape(-1, 1), hot.reshape(-1), curve_kernels.TASK_CODES["binary"]
    return scores.reshape(-1, 1), labels.reshape(-1, 1), curve_kernels.TASK_CODES["multilabel"]


def exact_finish(task: CurveTask, states: States, micro: bool, metric: int, level: float = 0.0) -> Tensor:
    """[R, 4] float64 (value, positives, negatives, threshold) per column of the exact state, by
    the exact_curve_finish kernel (the scores sorted once per column, the readout taken during
    one walk over its points); ValueError without a single counted sample, as counts()."""
    scores, labels, code = exact_layout(task, states, micro)
    out = torch.empty(scores.shape[1], 4, dtype=torch.float64, device=scores.device)
    curve_kernels.exact_curve_finish(out, scores, labels, code, metric, level)
    if not bool(out[:, 1:3].sum() > 0):
        raise _no_sample_error()
    return out


def _exact_readouts(task: CurveTask, states: States, micro: bool, metric: int) -> Tuple[Tensor, Tensor]:
    """(values [R], positives [R]) float64 of the exact state (exact_finish)."""
    out = exact_finish(task, states, micro, metric)
    return out[:, 0], out[:, 1]


def roc_readouts_from(task: CurveTask, states: States, average: Optional[str], metric: int, level: float) -> Tensor:
    """Exact mode on the host, per column or micro: [R, 4] (value, positives, negatives,
    threshold) of an ROC readout (kernels.curves' EER, SENSITIVITY_AT_SPECIFICITY,
    SPECIFICITY_AT_SENSITIVITY), with roc_from's warnings (a column without positives or
    negatives): the numbers readouts.py reads off roc_from's float32 curve."""
    micro = average == "micro"
    out = exact_finish(task, states, micro, metric, level)
    columns = None if micro else _columns_name(task)
    warn_no_positive(out[:, 1], "ROC", columns, "its TPR is 0", stacklevel=3)
    warn_no_negative(out[:, 2], "ROC", columns, stacklevel=3)
    return out


def pr_readouts_from(task: CurveTask, states: States, metric: int, level: float) -> Tensor:
    """Exact mode on the host, per column: [R, 4] rows of a precision-recall readout
    (kernels.curves.RECALL_AT_PRECISION), with precision_recall_curve_from's warning about a
    column without positives."""
    out = exact_finish(task, states, False, metric, level)
    if task.task == "multiclass":
        consequence = "its recall is undefined (NaN)"
    else:
        consequence = "its recall is set to 1"
    warn_no_positive(out[:, 1], "PrecisionRecallCurve", _columns_name(task), consequence, stacklevel=3)
    return out


def _columns_name(task: CurveTask) -> Optional[str]:
    return {"binary": None, "multiclass": "class", "multilabel": "label"}[task.task]


_BINNED_AUROC, _BINNED_AVERAGE_PRECISION = 0, 1  # binned_finish's and exact_curve_finish's metric codes


def _binned_readouts(task: CurveTask, states: States, micro: bool, metric: int) -> Optional[Tuple[Tensor, Tensor]]:
    """(values [R], positives [R]) float64 of a binned histogram by the C core (one walk per
    column, csrc/kernels/binned_finish.c), the same numbers auroc / average_precision form from
    Counts; None in exact mode or where the C core does not serve the histogram."""
    if not task.binned:
        return None
    hist = states["hist"]
    if micro:
        hist = hist.sum(0, keepdim=True)
    out = torch.empty(hist.shape[0], 3, dtype=torch.float64)
    if not kernels.binned_finish(out, hist, metric):
        return None
    return out[:, 0], out[:, 1]


def auroc_from(
    task: CurveTask, states: States, average: Optional[str] = "macro", max_fpr: Optional[float] = None
) -> Tensor:
    """AUROC: a scalar (binary, micro) or reduced over columns by `average`."""
    micro = average == "micro"
    readouts = None if max_fpr is not None else _binned_readouts(task, states, micro, _BINNED_AUROC)
    if readouts is None and max_fpr is None and not task.binned:
        readouts = _exact_readouts(task, states, micro, _BINNED_AUROC)
    if readouts is not None:
        values, pos = readouts
    else:
        cs = counts(task, states, micro)
        if max_fpr is not None:
            values = partial_auroc(cs[0], max_fpr)
        else:
            values = torch.cat([auroc(c) for c in cs])
        pos = torch.cat([c.pos for c in cs])
    warn_undefined(values, "AUROC", None if micro else _columns_name(task))
    if task.task == "binary" or micro:
        return values[0].to(OUT_DTYPE)
    return reduce_average(values, average, pos)


def average_precision_from(task: CurveTask, states: States, average: Optional[str] = "macro") -> Tensor:
    """Average precision: a scalar (binary, micro) or reduced over columns by `average`."""
    micro = average == "micro"
    readouts = _binned_readouts(task, states, micro, _BINNED_AVERAGE_PRECISION)
    if readouts is None and not task.binned:
        readouts = _exact_readouts(task, states, micro, _BINNED_AVERAGE_PRECISION)
    if readouts is not None:
        values, pos = readouts
    else:
        cs = counts(task, states, micro)
        values = torch.cat([average_precision(c) for c in cs])
        pos = torch.cat([c.pos for c in cs])
    warn_no_positive(pos, "AveragePrecision", None if micro else _columns_name(task))
    if task.task == "binary" or micro:
        return values[0].to(OUT_DTYPE)
    return reduce_average(values, average, pos)


def roc_from(task: CurveTask, states: States, average: Optional[str] = None) -> Curve:
    """(fpr, tpr, thresholds), thresholds descending. See _curves for the shapes.
    A column without positives (negatives) has TPR (FPR) 0 at every threshold, with a warning."""
    micro = average == "micro"
    columns = None if micro else _columns_name(task)
    if not task.binned:
        curves, sizes = exact_curves(task, states, micro, curve_kernels.ROC)
        warn_no_positive(sizes[:, 1], "ROC", columns, "its TPR is 0", stacklevel=3)
        warn_no_negative(sizes[:, 2], "ROC", columns, stacklevel=3)
        return _assemble(task, curves, average, descending=True)
    cs = counts(task, states, micro)
    warn_no_positive(torch.cat([c.pos for c in cs]), "ROC", columns, "its TPR is 0", stacklevel=3)
    warn_no_negative(torch.cat([c.neg for c in cs]), "ROC", columns, stacklevel=3)
    return _curves(task, cs, average, roc_rates, descending=True)


def precision_recall_curve_from(task: CurveTask, states: States, average: Optional[str] = None) -> Curve:
    """(precision, recall, thresholds), thresholds ascending. See _curves for the shapes.

    A column without positives: recall NaN in binned mode and for a class of the exact
    multiclass mode; 1 for exact binary and multilabel columns (scikit-learn's convention, which
    torchmetrics follows there). A warning names such columns."""
    micro = average == "micro"
    if task.binned or task.task == "multiclass":
        curve, consequence = pr_curve, "its recall is undefined (NaN)"
    else:
        curve, consequence = functools.partial(pr_curve, recall_if_no_positive=1.0), "its recall is set to 1"
    if not task.binned:
        kind = curve_kernels.PR_NAN_RECALL if task.task == "multiclass" else curve_kernels.PR_UNIT_RECALL
        curves, sizes = exact_curves(task, states, micro, kind)
        columns = None if micro else _columns_name(task)
        warn_no_positive(sizes[:, 1], "PrecisionRecallCurve", columns, consequence, stacklevel=3)
        return _assemble(task, curves, average, descending=False)
    cs = counts(task, states, micro)
    warn_no_positive(
        torch.cat([c.pos for c in cs]),
        "PrecisionRecallCurve",
        None if micro else _columns_name(task),
        consequence,
        stacklevel=3,
    )
    return _curves(task, cs, average, curve, descending=False)


def exact_roc_rows(task: CurveTask, states: States) -> Tuple[Tensor, Tensor, Tensor]:
    """Every column's exact ROC curve as rows: (fpr [R, L], tpr [R, L], sizes int64 [R, 3]),
    float32, each row past its M + 1 points padded with +inf (L the longest), with
    roc_from's warnings; the numbers roc_from returns per column."""
    scores, labels, code = exact_layout(task, states, False)
    curves, sizes = curve_kernels.curve_buffer(scores, labels, code, curve_kernels.ROC)
    if not bool(sizes[:, 0].any()):
        raise _no_sample_error()
    columns = _columns_name(task)
    warn_no_positive(sizes[:, 1], "ROC", columns, "its TPR is 0", stacklevel=4)
    warn_no_negative(sizes[:, 2], "ROC", columns, stacklevel=4)
    last = sizes[:, :1]  # the index of each row's last point
    length = int(last.max()) + 1
    past = torch.arange(length, device=last.device) > last
    rows = curves[:, :2, :length].masked_fill(past[:, None, :], float("inf"))
    return rows[:, 0], rows[:, 1], sizes


def exact_curves(
    task: CurveTask, states: States, micro: bool, kind: int
) -> Tuple[List[Tuple[Tensor, Tensor, Tensor]], Tensor]:
    """The float32 curves of the exact state, a column each, straight from exact_curve_rates
    (`kind`: kernels.curves' ROC, PR_NAN_RECALL, PR_UNIT_RECALL), the numbers roc_rates /
    pr_curve form from counts(); and sizes int64 [R, 3] (points, positives, negatives).
    ValueError without a single counted sample, as counts()."""
    scores, labels, code = exact_layout(task, states, micro)
    curves, sizes = curve_kernels.column_curves(scores, labels, code, kind)
    if not bool(sizes[:, 0].any()):
        raise _no_sample_error()
    return curves, sizes


def _assemble(
    task: CurveTask, curves: List[Tuple[Tensor, Tensor, Tensor]], average: Optional[str], descending: bool
) -> Curve:
    """Exact float32 curves, a column each: one (binary, micro), the list of each (None) or
    their macro average (macro_curve)."""
    if task.task == "binary" or average == "micro":
        return curves[0]
    xs, ys, ts = (list(v) for v in zip(*curves))
    if average == "macro":
        return macro_curve(xs, ys, ts, descending)
    return xs, ys, ts


def _curves(task: CurveTask, cs: List[Counts], average: Optional[str], curve, descending: bool) -> Curve:
    """Binary or micro: three 1-D tensors. Per column: binned [K, M] tensors with one shared
    thresholds tensor, exact lists of 1-D tensors (lengths differ). Macro: the per-column
    curves averaged on the union of their x values (macro_curve)."""
    micro = average == "micro"
    per_column: List[Tuple[Tensor, Tensor, Tensor]] = []
    for c in cs:
        x, y, t = curve(c)
        per_column.extend((x[r], y[r], t) for r in range(x.shape[0]))
    out = [(x.to(OUT_DTYPE), y.to(OUT_DTYPE), t) for x, y, t in per_column]
    if task.task == "binary" or micro:
        return out[0]
    xs, ys, ts = (list(v) for v in zip(*out))
    if average == "macro":
        return macro_curve(xs, ys, ts, descending)
    if task.binned:
        return torch.stack(xs), torch.stack(ys), ts[0]
    return xs, ys, ts
