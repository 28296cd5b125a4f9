"""Readouts of a curve state: one number (or a number and the threshold where it is reached)
per column, read off the ROC or precision-recall curve that compute.py derives from the same
state (binned histogram or exact score rows), so a readout never needs a state of its own.

* EER (equal error rate): on the ROC curve, the point where FPR and FNR = 1 - TPR are closest
  (the first such point, in the curve's order of descending thresholds); its (FPR + FNR) / 2.
* LogAUC: the area under TPR over log10(FPR) between the two FPRs of ``fpr_range`` (both
  points added to the curve by linear interpolation in FPR), divided by the width of that range
  in log10 units.
* precision at fixed recall: the highest precision among the PR points (thresholds ascending)
  whose recall is >= ``min_recall``; ties broken by the higher recall, then the higher
  threshold. Returns (precision, threshold); threshold NaN when that precision is 0 or no
  point qualifies (precision 0).
* recall at fixed precision: the highest recall among the points whose precision is
  >= ``min_precision``; ties broken by the higher precision, then the higher threshold.
  Returns (recall, threshold); threshold NaN when that recall is 0 or no point qualifies.
* sensitivity at specificity / specificity at sensitivity: on the ROC curve (thresholds
  descending, exact mode with the origin at threshold 1.0), the highest sensitivity (TPR) among
  the points whose specificity (1 - FPR) is >= the minimum, the first such point on a tie (the
  mirror image for specificity). Returns (value, threshold); (0, 1e6) when no point qualifies.

In exact mode with the state on the host, EER (per column or micro), the two rate-at-rate
readouts and recall at fixed precision come from the C core (compute.roc_readouts_from,
pr_readouts_from), which walks the same float32 curve without building it: the same numbers,
bit for bit. Exact LogAUC takes every column at once from the C core's curve rows
(compute.exact_roc_rows, logauc_rows), again the same bits as column by column.

These are torchmetrics 1.9's rules, point for point: the readouts work on the curves' float32
values (and the thresholds' dtype) as torchmetrics does, so ties and the threshold returned are
the same. Where torchmetrics fails or reads garbage, on purpose:

* recall at fixed precision of a column without positives and ``min_precision=0`` (binned:
  torchmetrics raises IndexError): 0 and threshold NaN, as any column without a qualifying
  point; the curve's warning about the column says why;
* LogAUC where the curve stops short of an FPR of ``fpr_range`` on a vertical stretch (a column
  without negative samples: FPR 0 throughout): NaN with a warning, left out of "macro"
  (torchmetrics: inf, which a macro average takes in);
* LogAUC interpolates on the curve in its own order. torchmetrics first sorts the points by FPR
  with an unstable sort, so where the curve is vertical (tied FPRs, common in exact mode, e.g.
  at FPR 0 when the top scores are all positives) the TPR it interpolates from is an arbitrary
  one of the tied points: its value there depends on torch's sort, not on the data.
"""

import numbers
import warnings
from typing import Any, Callable, List, Optional, Tuple, TypeVar

import torch
from torch import Tensor

from ...kernels import curves as curve_kernels
from .compute import (
    Curve,
    States,
    exact_roc_rows,
    pr_readouts_from,
    precision_recall_curve_from,
    roc_from,
    roc_readouts_from,
)
from .update import CurveTask

Readout = Tuple[Tensor, Tensor]
Out = TypeVar("Out")
_NO_POINT_THRESHOLD = 1e6  # the threshold torchmetrics reports when no ROC point qualifies
LOGAUC_AVERAGES = (None, "none", "macro")
_ONE_COLUMN_ROWS_FROM = 2048  # binary LogAUC: the sample count from which logauc_rows is quicker


# -- option checks ----------------------------------------------------------------------------


def check_fraction(name: str, value: Any) -> float:
    """A minimum rate (min_recall, min_precision, ...): a real number in [0, 1]."""
    if isinstance(value, Tensor) and value.numel() == 1 and not value.is_complex():
        value = value.item()
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name}: expected a float in [0, 1], got {type(value).__name__}")
    number = float(value)
    if not 0 <= number <= 1:  # False for NaN too
        raise ValueError(f"{name}: expected a float in [0, 1], got {value}")
    return number


def check_fpr_range(fpr_range: Any) -> Tuple[float, float]:
    """LogAUC's ``fpr_range``: two numbers (a tuple or a list), 0 <= low < high <= 1."""
    if not isinstance(fpr_range, (tuple, list)) or len(fpr_range) != 2:
        raise ValueError(f"fpr_range: expected a tuple of two floats (low, high), got {fpr_range!r}")
    for v in fpr_range:
        if isinstance(v, bool) or not isinstance(v, numbers.Real):
            raise TypeError(f"fpr_range: expected a tuple of two floats, got an element of type {type(v).__name__}")
    low, high = float(fpr_range[0]), float(fpr_range[1])
    if not 0 <= low < high <= 1:
        raise ValueError(f"fpr_range: expected 0 <= low < high <= 1, got {tuple(fpr_range)}")
    return low, high


def check_logauc_average(average: Any) -> Optional[str]:
    """LogAUC's ``average``: None or "none" (per column), "macro" (mean of the defined columns)."""
    if average not in LOGAUC_AVERAGES:
        raise ValueError(f"average: expected one of {list(LOGAUC_AVERAGES)}, got {average!r}")
    return average


# -- the curves, column by column -----------------------------------------------------------


def _curve(fn: Callable[..., Out], what: str, task: CurveTask, states: States, average: Optional[str]) -> Out:
    """The curve, its warnings (a column without positives or negatives) re-issued under ``what``."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = fn(task, states, average)
    for w in caught:
        warnings.warn(f"{what}: {w.message}", w.category, stacklevel=4)
    return out


def _columns(curve: Curve) -> List[Tuple[Tensor, Tensor, Tensor]]:
    """(x, y, thresholds) per column: one for 1-D curves, a row each for binned [K, M] ones."""
    x, y, t = curve
    if isinstance(x, Tensor) and x.dim() == 1:
        return [(x, y, t)]  # type: ignore[list-item]
    if isinstance(t, Tensor):  # binned: one thresholds tensor for every row
        return [(x[k], y[k], t) for k in range(len(x))]
    return list(zip(x, y, t))


def _one_or_stacked(task: CurveTask, values: List[Tensor], average: Optional[str] = None) -> Tensor:
    if task.task == "binary" or average in ("micro", "macro"):
        return values[0]
    return torch.stack(values)


def _readouts(task: CurveTask, pairs: List[Readout]) -> Readout:
    if task.task == "binary":
        return pairs[0]
    return torch.stack([v for v, _ in pairs]), torch.stack([t for _, t in pairs])


# -- EER --------------------------------------------------------------------------------------


def _eer(fpr: Tensor, tpr: Tensor) -> Tensor:
    fnr = 1 - tpr
    i = torch.argmin(torch.abs(fpr - fnr))  # the first of equal gaps
    return (fpr[i] + fnr[i]) / 2


def _exact_on_host(task: CurveTask, states: States) -> bool:
    """Exact mode with the state on the host: the C core reads the readouts off the sorted
    scores (compute.roc_readouts_from), the same numbers as from roc_from's curve."""
    return not task.binned and states["scores"].is_cpu


def _host_readouts(task: CurveTask, states: States, what: str, metric: int, level: float, average=None) -> Tensor:
    def readouts(t: CurveTask, s: States, a: Optional[str]) -> Tensor:
        return roc_readouts_from(t, s, a, metric, level)

    return _curve(readouts, what, task, states, average)


def _host_pair(task: CurveTask, out: Tensor) -> Readout:
    """(value, threshold) float32 of roc_readouts_from's rows: scalars (binary) or [K]."""
    values, thresholds = out[:, 0].to(torch.float32), out[:, 3].to(torch.float32)
    return (values[0], thresholds[0]) if task.task == "binary" else (values, thresholds)


def eer_from(task: CurveTask, states: States, average: Optional[str] = None) -> Tensor:
    """Equal error rate: a scalar (binary, micro, macro) or one per column."""
    if _exact_on_host(task, states) and average != "macro":  # macro: the averaged curve's
        out = _host_readouts(task, states, "EER", curve_kernels.EER, 0.0, average)
        values = out[:, 0].to(torch.float32)
        return values[0] if task.task == "binary" or average == "micro" else values
    columns = _columns(_curve(roc_from, "EER", task, states, average))
    return _one_or_stacked(task, [_eer(f, t) for f, t, _ in columns], average)


# -- LogAUC -----------------------------------------------------------------------------------


def _interp(x: Tensor, xp: Tensor, fp: Tensor) -> Tensor:
    """The polyline (xp, fp) (xp non-decreasing, in the curve's order) at x: on the segment that
    ends at the first xp >= x (the first segment for x <= xp[0], the last beyond xp[-1]), as
    fp[k] + slope * (x - xp[k]); a vertical segment's slope is inf or NaN, as torchmetrics'."""
    slope = (fp[1:] - fp[:-1]) / (xp[1:] - xp[:-1])
    k = (torch.searchsorted(xp, x) - 1).clamp(0, slope.numel() - 1)
    return fp[k] + slope[k] * (x - xp[k])


def column_logauc(fpr: Tensor, tpr: Tensor, fpr_range: Tuple[float, float]) -> Tensor:
    bounds = torch.tensor(fpr_range, device=fpr.device)
    if fpr.numel() < 2:
        warnings.warn("LogAUC: fewer than two ROC points; its value is 0", UserWarning, stacklevel=4)
        return torch.zeros((), device=fpr.device)
    ends = _interp(bounds, fpr, tpr)
    if not torch.isfinite(ends).all():  # the curve stops short of a bound on a vertical segment
        return torch.full((), float("nan"), dtype=tpr.dtype, device=tpr.device)
    # Both ends of the range joined to the curve; fpr and tpr rise together, so sorting each
    # keeps the points paired.
    y = torch.cat([tpr, ends]).sort().values
    x = torch.log10(torch.cat([fpr, bounds]).sort().values)
    log_bounds = torch.log10(bounds)
    lo = int((x == log_bounds[0]).nonzero()[-1])
    hi = int((x == log_bounds[1]).nonzero()[-1])
    area = torch.trapezoid(y[lo : hi + 1], x[lo : hi + 1])
    return area / (log_bounds[1] - log_bounds[0])


def _merge(rows: Tensor, values: Tensor) -> Tensor:
    """Each row (non-decreasing, contiguous) with its two values (no NaN) put in: the values of
    torch.cat([rows, values], 1).sort(1), without the sort (equal values have equal bits here)."""
    values = torch.stack([values.amin(1), values.amax(1)], 1)
    at = torch.searchsorted(rows, values) + torch.arange(2, device=rows.device)
    out = rows.new_empty(rows.shape[0], rows.shape[1] + 2)
    keep = torch.ones(out.shape, dtype=torch.bool, device=rows.device)
    keep.scatter_(1, at, False)
    out.scatter_(1, at, values)
    out[keep] = rows.flatten()
    return out


def logauc_rows(fpr: Tensor, tpr: Tensor, points: Tensor, fpr_range: Tuple[float, float]) -> Tensor:
    """column_logauc of every row of exact_roc_rows (points [R]: each row's point count, +inf past
    them), bit for bit: the ends, the sorted points with them and their log10 for all rows at
    once (+inf sorts last), then each row's trapezoids over its slice from the last point at the
    lower bound to the last at the upper, as column_logauc sums them."""
    bounds = torch.tensor(fpr_range, device=fpr.device).expand(fpr.shape[0], 2)
    fpr, tpr = fpr.contiguous(), tpr.contiguous()
    slope = (tpr[:, 1:] - tpr[:, :-1]) / (fpr[:, 1:] - fpr[:, :-1])
    last_segment = (points - 2).clamp(min=0)[:, None]
    k = torch.minimum((torch.searchsorted(fpr, bounds.contiguous()) - 1).clamp(min=0), last_segment)
    ends = tpr.gather(1, k) + slope.gather(1, k) * (bounds - fpr.gather(1, k))
    finite = torch.isfinite(ends).all(1)
    y = _merge(tpr, torch.where(finite[:, None], ends, torch.full_like(ends, float("inf"))))
    x = _merge(fpr, bounds)
    log_x, log_bounds = torch.log10(x), torch.log10(bounds[0])
    # the last index whose log10 equals each bound's (as column_logauc finds it; both are among x)
    spans = ((log_x[:, None, :] <= log_bounds[None, :, None]).sum(2) - 1).tolist()
    short = (points < 2).tolist()
    areas = [
        log_x.new_zeros(()) if too_short else torch.trapezoid(y[r, lo : hi + 1], log_x[r, lo : hi + 1])
        for r, ((lo, hi), too_short) in enumerate(zip(spans, short))
    ]
    area = torch.stack(areas) / (log_bounds[1] - log_bounds[0])
    # the curve stops short of a bound on a vertical segment: NaN, as column_logauc
    area = torch.where(finite, area, torch.full_like(area, float("nan")))
    if any(short):
        warnings.warn("LogAUC: fewer than two ROC points; its value is 0", UserWarning, stacklevel=4)
        area = torch.where(points < 2, torch.zeros_like(area), area)
    return area


def _exact_roc_rows(task: CurveTask, states: States, average: Optional[str]) -> Tuple[Tensor, Tensor, Tensor]:
    return exact_roc_rows(task, states)


def logauc_from(
    task: CurveTask, states: States, fpr_range: Tuple[float, float], average: Optional[str] = None
) -> Tensor:
    """LogAUC per column, or their mean over the defined (non-NaN) columns for "macro"."""
    # Exact mode: every column at once from the curves' rows, which skips the sorts; one binary
    # column of a few thousand scores is quicker by column_logauc (fewer ops: 0.19 ms against
    # 0.36 ms at 64 scores, 2.0 ms against 0.8 ms at 12,800, on one thread).
    if not task.binned and (task.task != "binary" or states["scores"].shape[0] > _ONE_COLUMN_ROWS_FROM):
        fpr, tpr, sizes = _curve(_exact_roc_rows, "LogAUC", task, states, None)
        scores = logauc_rows(fpr, tpr, sizes[:, 0] + 1, fpr_range)
    else:
        columns = _columns(_curve(roc_from, "LogAUC", task, states, None))
        scores = torch.stack([column_logauc(f, t, fpr_range) for f, t, _ in columns])
    undefined = torch.isnan(scores)
    if undefined.any():
        where = "" if task.task == "binary" else f" for {'class' if task.task == 'multiclass' else 'label'} "
        where += str(undefined.nonzero().flatten().tolist()) if where else ""
        left_out = " (left out of the macro average)" if average == "macro" else ""
        warnings.warn(
            f"LogAUC is undefined (NaN){where}{left_out}: the ROC curve does not reach both FPRs of "
            f"fpr_range={fpr_range} (no negative sample, or binned thresholds above every negative's "
            "score), or fpr_range starts at 0 (log10(0))",
            UserWarning,
            stacklevel=3,
        )
    if task.task == "binary":
        return scores[0]
    if average == "macro":
        return scores[~undefined].mean()
    return scores


# -- at a fixed rate --------------------------------------------------------------------------


def _lexicographic_argmax(keys: List[Tensor]) -> int:
    """The first index of the largest (keys[0][i], keys[1][i], ...) (no NaN in the keys)."""
    idx = torch.arange(keys[0].numel(), device=keys[0].device)
    for key in keys:
        column = key[idx]
        idx = idx[column == column.max()]
        if idx.numel() < 2:
            break
    return int(idx[0])


def _nan(like: Tensor) -> Tensor:
    return torch.full((), float("nan"), dtype=like.dtype, device=like.device)


def _precision_at_recall(precision: Tensor, recall: Tensor, thresholds: Tensor, min_recall: float) -> Readout:
    n = min(precision.numel(), recall.numel(), thresholds.numel())  # the end point has no threshold
    p, r, t = precision[:n], recall[:n], thresholds[:n]
    ok = (r >= min_recall).nonzero().flatten()
    if ok.numel() == 0:
        return torch.zeros((), dtype=precision.dtype, device=precision.device), _nan(thresholds)
    # Points compare by (precision, recall, threshold); a NaN precision (binned: no score at or
    # above the threshold) is never larger, nor smaller: it wins only as the first point.
    if torch.isnan(p[ok[0]]):
        best = int(ok[0])
    else:
        ok = ok[~torch.isnan(p[ok])]
        best = int(ok[_lexicographic_argmax([p[ok], r[ok], t[ok]])])
    value, threshold = p[best], t[best]
    return value, _nan(thresholds) if value == 0 else threshold


def _recall_at_precision(precision: Tensor, recall: Tensor, thresholds: Tensor, min_precision: float) -> Readout:
    n = min(precision.numel(), recall.numel(), thresholds.numel())
    p, r, t = precision[:n], recall[:n], thresholds[:n]
    ok = (p >= min_precision).nonzero().flatten()  # NaN precision never qualifies
    if ok.numel() == 0 or torch.isnan(r[ok]).any():  # none, or a column without positives
        return torch.zeros((), dtype=recall.dtype, device=recall.device), _nan(thresholds)
    dtype = torch.promote_types(recall.dtype, thresholds.dtype)  # torchmetrics reads one stacked table
    best = int(ok[_lexicographic_argmax([r[ok], p[ok], t[ok]])])
    value = r[best].to(dtype)
    return value, _nan(thresholds) if value == 0 else t[best].to(dtype)


def _best_where(value: Tensor, condition: Tensor, thresholds: Tensor) -> Readout:
    """The largest ``value`` where ``condition`` holds (the first on a tie) and its threshold;
    (0, 1e6) where it never holds."""
    ok = condition.nonzero().flatten()
    if ok.numel() == 0:
        return (
            torch.zeros((), dtype=value.dtype, device=value.device),
            torch.full((), _NO_POINT_THRESHOLD, dtype=thresholds.dtype, device=thresholds.device),
        )
    best = int(ok[torch.argmax(value[ok])])
    return value[best], thresholds[best]


def precision_at_fixed_recall_from(task: CurveTask, states: States, min_recall: float) -> Readout:
    """(precision, threshold): a pair of scalars (binary) or of [K] tensors."""
    columns = _columns(_curve(precision_recall_curve_from, "PrecisionAtFixedRecall", task, states, None))
    return _readouts(task, [_precision_at_recall(p, r, t, min_recall) for p, r, t in columns])


def recall_at_fixed_precision_from(task: CurveTask, states: States, min_precision: float) -> Readout:
    """(recall, threshold): a pair of scalars (binary) or of [K] tensors."""
    if _exact_on_host(task, states):

        def readouts(t: CurveTask, s: States, a: Optional[str]) -> Tensor:
            return pr_readouts_from(t, s, curve_kernels.RECALL_AT_PRECISION, min_precision)

        out = _curve(readouts, "RecallAtFixedPrecision", task, states, None)
        return _host_pair(task, out)
    columns = _columns(_curve(precision_recall_curve_from, "RecallAtFixedPrecision", task, states, None))
    return _readouts(task, [_recall_at_precision(p, r, t, min_precision) for p, r, t in columns])


def sensitivity_at_specificity_from(task: CurveTask, states: States, min_specificity: float) -> Readout:
    """(sensitivity, threshold): a pair of scalars (binary) or of [K] tensors."""
    if _exact_on_host(task, states):
        what, metric = "SensitivityAtSpecificity", curve_kernels.SENSITIVITY_AT_SPECIFICITY
        return _host_pair(task, _host_readouts(task, states, what, metric, min_specificity))
    columns = _columns(_curve(roc_from, "SensitivityAtSpecificity", task, states, None))
    return _readouts(task, [_best_where(tpr, (1 - fpr) >= min_specificity, t) for fpr, tpr, t in columns])


def specificity_at_sensitivity_from(task: CurveTask, states: States, min_sensitivity: float) -> Readout:
    """(specificity, threshold): a pair of scalars (binary) or of [K] tensors."""
    if _exact_on_host(task, states):
        what, metric = "SpecificityAtSensitivity", curve_kernels.SPECIFICITY_AT_SENSITIVITY
        return _host_pair(task, _host_readouts(task, states, what, metric, min_sensitivity))
    columns = _columns(_curve(roc_from, "SpecificityAtSensitivity", task, states, None))
    return _readouts(task, [_best_where(1 - fpr, tpr >= min_sensitivity, t) for fpr, tpr, t in columns])
