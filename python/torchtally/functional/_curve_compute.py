"""compute() of the curve metrics from their state (see _curve_inputs for the state layout).

Each function takes the CurveTask and the states {"hist": ...} (binned) or {"scores": ...,
"labels": ...} (exact) and is shared by the functional forms and the metric classes.
"""
import functools
from typing import Dict, List, Optional, Tuple, Union

import torch
from torch import Tensor

from ._curve_inputs import IGNORED, CurveTask
from ._curve_math import (
    OUT_DTYPE,
    Counts,
    auroc,
    average_precision,
    binned_counts,
    exact_counts,
    macro_curve,
    partial_auroc,
    pr_curve,
    reduce_average,
    roc_rates,
    warn_no_negative,
    warn_no_positive,
    warn_undefined,
)

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
        return [binned_counts(hist, task.thresholds.values.to(hist.device))]
    columns = _exact_columns(task, states["scores"], states["labels"], micro)
    if all(scores.numel() == 0 for scores, _ in columns):
        raise ValueError(
            "compute: no sample to compute from; exact mode (thresholds=None) needs at least one sample "
            "that is not ignored (update() first, or pass thresholds= for the binned mode)"
        )
    return [exact_counts(s, p) for s, p in columns]


def _exact_columns(task: CurveTask, scores: Tensor, labels: Tensor, micro: bool) -> List[Tuple[Tensor, Tensor]]:
    """(scores [n], is_positive [n]) of every column, counted samples only."""
    if task.task == "binary":
        return [(scores, labels == 1)]
    if task.task == "multiclass":
        hot = labels.long()[:, None] == torch.arange(task.num, device=labels.device)
        if micro:
            return [(scores.reshape(-1), hot.reshape(-1))]
        return [(scores[:, k], hot[:, k]) for k in range(task.num)]
    keep = labels != IGNORED
    if micro:
        return [(scores[keep], labels[keep] == 1)]
    return [(scores[keep[:, k], k], labels[keep[:, k], k] == 1) for k in range(task.num)]


def _columns_name(task: CurveTask) -> Optional[str]:
    return {"binary": None, "multiclass": "class", "multilabel": "label"}[task.task]


def auroc_from(task: CurveTask, states: States, average: Optional[str] = "macro", max_fpr: Optional[float] = None) -> Tensor:
    """AUROC: a scalar (binary, micro) or reduced over columns by `average`."""
    micro = average == "micro"
    cs = counts(task, states, micro)
    if max_fpr is not None:
        values = partial_auroc(cs[0], max_fpr)
    else:
        values = torch.cat([auroc(c) for c in cs])
    warn_undefined(values, "AUROC", None if micro else _columns_name(task))
    if task.task == "binary" or micro:
        return values[0].to(OUT_DTYPE)
    return reduce_average(values, average, torch.cat([c.pos for c in cs]))


def average_precision_from(task: CurveTask, states: States, average: Optional[str] = "macro") -> Tensor:
    """Average precision: a scalar (binary, micro) or reduced over columns by `average`."""
    micro = average == "micro"
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
    cs = counts(task, states, micro)
    columns = None if micro else _columns_name(task)
    warn_no_positive(torch.cat([c.pos for c in cs]), "ROC", columns, "its TPR is 0", stacklevel=3)
    warn_no_negative(torch.cat([c.neg for c in cs]), "ROC", columns, stacklevel=3)
    return _curves(task, cs, average, roc_rates, descending=True)


def precision_recall_curve_from(task: CurveTask, states: States, average: Optional[str] = None) -> Curve:
    """(precision, recall, thresholds), thresholds ascending. See _curves for the shapes.

    A column without positives: recall NaN in binned mode and for a class of the exact
    multiclass mode; 1 for exact binary and multilabel columns (scikit-learn's convention, which
    torchmetrics follows there). A warning names such columns."""
    micro = average == "micro"
    cs = counts(task, states, micro)
    if task.binned or task.task == "multiclass":
        curve, consequence = pr_curve, "its recall is undefined (NaN)"
    else:
        curve, consequence = functools.partial(pr_curve, recall_if_no_positive=1.0), "its recall is set to 1"
    warn_no_positive(torch.cat([c.pos for c in cs]), "PrecisionRecallCurve", None if micro else _columns_name(task),
                     consequence, stacklevel=3)
    return _curves(task, cs, average, curve, descending=False)


def _curves(task: CurveTask, cs: List[Counts], average: Optional[str], curve, descending: bool) -> Curve:
    """Binary or micro: three 1-D tensors. Per column: binned [K, M] tensors with one shared
    thresholds tensor, exact lists of 1-D tensors (lengths differ). Macro: the per-column
    curves averaged on the union of their x values (macro_curve)."""
    micro = average == "micro"
    per_column = []
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
