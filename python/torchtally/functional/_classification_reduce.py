"""Classification results from the count states (shared by the classes and the functional forms).

Counts are int64; ratios are formed in float64 (exact for counts below 2**53) and returned as
float32, the dtype torchmetrics returns. Conventions, as torchmetrics 1.x defines them:

* a ratio with a zero denominator is ``zero_division`` (0 unless the metric takes the option);
* average "micro" sums the counts over classes first; "macro" is the plain mean of the
  per-class scores, except that for multiclass a class that never occurs in target or preds
  (tp + fp + fn == 0; for top-k: no support) is left out; "weighted" weights by support
  (tp + fn); "none" returns the per-class scores; a zero total weight gives 0.
* multilabel accuracy counts correct elements, (tp + tn) / all, per label or pooled ("micro").
"""
from typing import NamedTuple, Optional

import torch
from torch import Tensor

_FLOAT32_EPS = float(torch.finfo(torch.float32).eps)


class Stats(NamedTuple):
    """Per-class (or 0-d, binary) int64 counts. ``kind``: binary | multiclass | multilabel | topk.
    For "topk" only tp (hits) and fn (support - hits) are known; fp and tn are None."""

    tp: Tensor
    fp: Optional[Tensor]
    tn: Optional[Tensor]
    fn: Tensor
    kind: str


def binary_stats(confmat: Tensor) -> Stats:
    return Stats(confmat[1, 1], confmat[0, 1], confmat[0, 0], confmat[1, 0], "binary")


def multiclass_stats(confmat: Tensor) -> Stats:
    tp = confmat.diagonal()
    fp = confmat.sum(0) - tp
    fn = confmat.sum(1) - tp
    return Stats(tp, fp, confmat.sum() - tp - fp - fn, fn, "multiclass")


def multilabel_stats(confmat: Tensor) -> Stats:
    return Stats(confmat[:, 1, 1], confmat[:, 0, 1], confmat[:, 0, 0], confmat[:, 1, 0], "multilabel")


def topk_stats(state: Tensor) -> Stats:
    hits, support = state[:, 1], state[:, 2]
    return Stats(hits, None, None, support - hits, "topk")


def _ratio(num: Tensor, den: Tensor, zero_division: float = 0.0) -> Tensor:
    num, den = num.double(), den.double()
    return torch.where(den != 0, num / torch.where(den != 0, den, 1.0), zero_division)


def _result(x: Tensor) -> Tensor:
    return x.to(torch.float32)


def _average(score: Tensor, s: Stats, average: str) -> Tensor:
    """Reduce per-class ``score`` over classes ("macro" / "weighted" / "none")."""
    if s.kind == "binary" or average == "none":
        return _result(score)
    if average == "weighted":
        weights = (s.tp + s.fn).double()
    else:
        weights = torch.ones_like(score)
        if s.kind == "multiclass":
            weights[(s.tp + s.fp + s.fn) == 0] = 0.0
        elif s.kind == "topk":
            weights[(s.tp + s.fn) == 0] = 0.0
    return _result(_ratio((weights * score).sum(), weights.sum()))


def _micro(s: Stats, average: str) -> bool:
    return average == "micro" and s.kind != "binary"


def accuracy(s: Stats, average: str) -> Tensor:
    if s.kind in ("binary", "multilabel"):
        correct, total = s.tp + s.tn, s.tp + s.tn + s.fp + s.fn
    else:  # multiclass: per class the recall; pooled, the share of correct samples
        correct, total = s.tp, s.tp + s.fn
    if _micro(s, average):
        return _result(_ratio(correct.sum(), total.sum()))
    return _average(_ratio(correct, total), s, average)


def precision(s: Stats, average: str, zero_division: float = 0.0) -> Tensor:
    return _tp_ratio(s, s.fp, average, zero_division)


def recall(s: Stats, average: str, zero_division: float = 0.0) -> Tensor:
    return _tp_ratio(s, s.fn, average, zero_division)


def _tp_ratio(s: Stats, other: Tensor, average: str, zero_division: float) -> Tensor:
    if _micro(s, average):
        return _result(_ratio(s.tp.sum(), (s.tp + other).sum(), zero_division))
    return _average(_ratio(s.tp, s.tp + other, zero_division), s, average)


def fbeta(s: Stats, beta: float, average: str, zero_division: float = 0.0) -> Tensor:
    """(1 + beta^2) tp / ((1 + beta^2) tp + beta^2 fn + fp)."""
    b2 = beta * beta
    tp, fp, fn = s.tp.double(), s.fp.double(), s.fn.double()
    if _micro(s, average):
        tp, fp, fn = tp.sum(), fp.sum(), fn.sum()
    score = _ratio((1 + b2) * tp, (1 + b2) * tp + b2 * fn + fp, zero_division)
    return _result(score) if _micro(s, average) else _average(score, s, average)


def specificity(s: Stats, average: str) -> Tensor:
    if _micro(s, average):
        return _result(_ratio(s.tn.sum(), (s.tn + s.fp).sum()))
    return _average(_ratio(s.tn, s.tn + s.fp), s, average)


def stat_scores(s: Stats, average: str) -> Tensor:
    """[tp, fp, tn, fn, support] (int64) per class ("none") or summed ("micro"; binary: [5]);
    "macro" is their float mean over all classes, "weighted" the support-weighted mean."""
    table = torch.stack([s.tp, s.fp, s.tn, s.fn, s.tp + s.fn], dim=-1)
    if s.kind == "binary" or average == "none":
        return table
    if average == "micro":
        return table.sum(0)
    if average == "macro":
        return _result(table.double().mean(0))
    support = (s.tp + s.fn).double()
    return _result((table.double() * (support / support.sum())[:, None]).sum(0))  # 0 support: NaN, as torchmetrics


# -- metrics of the whole confusion matrix ------------------------------------------------------


def confusion_matrix(confmat: Tensor, normalize: Optional[str]) -> Tensor:
    """The counts (int64, a copy) or normalised over targets ("true": rows), predictions ("pred":
    columns) or "all"; a 0/0 entry is 0. Multilabel [L, 2, 2] is normalised per label."""
    if normalize is None:
        return confmat.clone()
    counts = confmat.double()
    dims = {"true": (-1,), "pred": (-2,), "all": (-2, -1)}[normalize]
    return _result(_ratio(counts, counts.sum(dim=dims, keepdim=True).expand_as(counts)))


def jaccard_index(confmat: Tensor, kind: str, average: str, ignore_index: Optional[int] = None,
                  zero_division: float = 0.0) -> Tensor:
    """tp / (tp + fp + fn). Multiclass: a class in neither target nor preds, and the class
    ``ignore_index`` (when in range), are left out of "macro"; "micro" drops the ignored
    class's predictions from the denominator. A zero total weight gives NaN, as torchmetrics."""
    if kind == "binary":
        s = binary_stats(confmat)
        return _result(_ratio(s.tp, s.tp + s.fp + s.fn, zero_division))
    s = multiclass_stats(confmat) if kind == "multiclass" else multilabel_stats(confmat)
    union = (s.tp + s.fp + s.fn).double()
    ignored = kind == "multiclass" and ignore_index is not None and 0 <= ignore_index < confmat.shape[0]
    if average == "micro":
        den = union.sum() - (union[ignore_index] if ignored else 0.0)
        return _result(_ratio(s.tp.sum(), den, zero_division))
    score = _ratio(s.tp, union, zero_division)
    if average == "none":
        return _result(score)
    if average == "weighted":
        weights = (s.tp + s.fn).double()
    else:
        weights = torch.ones_like(score)
        if ignored:
            weights[ignore_index] = 0.0
        if kind == "multiclass":
            weights[(confmat.sum(0) + confmat.sum(1)) == 0] = 0.0
    return _result((weights * score).sum() / weights.sum())


def matthews_corrcoef(confmat: Tensor) -> Tensor:
    """Matthews' correlation of a [C, C] matrix (multilabel [L, 2, 2]: of the pooled 2 x 2).

    0 when a variance is 0 for C > 2. For 2 x 2, torchmetrics' conventions: 1 when every sample
    is right, -1 when every one is wrong, and, when all targets or all predictions are one
    class, the correlation with float32 eps added to the four marginals (scikit-learn: 0).
    """
    cm = (confmat.sum(0) if confmat.dim() == 3 else confmat).double()
    if cm.shape == (2, 2):
        tn, fp, fn, tp = cm.reshape(-1).tolist()
        if tp + tn != 0 and fp + fn == 0:
            return _result(torch.tensor(1.0, device=cm.device))
        if tp + tn == 0 and fp + fn != 0:
            return _result(torch.tensor(-1.0, device=cm.device))
    true, pred = cm.sum(1), cm.sum(0)
    total = cm.sum()
    cov = cm.trace() * total - (true * pred).sum()
    var_pred = total * total - (pred * pred).sum()
    var_true = total * total - (true * true).sum()
    if float(var_pred * var_true) != 0.0:
        return _result(cov / (var_pred * var_true).sqrt())
    if cm.shape != (2, 2):
        return _result(torch.zeros((), device=cm.device))
    return _result(torch.tensor(_mcc_one_sided(tp, fp, tn, fn), device=cm.device))


def _mcc_one_sided(tp: float, fp: float, tn: float, fn: float) -> float:
    """torchmetrics' 2 x 2 value when all targets or all predictions are one class."""
    eps = _FLOAT32_EPS
    if fn == 0 and tn == 0:
        num = tp - fp
    elif fp == 0 and tn == 0:
        num = tp - fn
    elif tp == 0 and fn == 0:
        num = tn - fp
    else:  # tp == 0 and fp == 0
        num = tn - fn
    den = (tp + fp + eps) * (tp + fn + eps) * (tn + fp + eps) * (tn + fn + eps)
    return eps ** 0.5 * num / den ** 0.5


def cohen_kappa(confmat: Tensor, weights: Optional[str]) -> Tensor:
    """1 - sum(w * observed) / sum(w * expected), expected = outer(row sums, column sums) / total;
    w = 1 off the diagonal (None), |i - j| ("linear") or (i - j)^2 ("quadratic")."""
    cm = confmat.double()
    c = cm.shape[0]
    expected = torch.outer(cm.sum(1), cm.sum(0)) / cm.sum()
    idx = torch.arange(c, dtype=torch.float64, device=cm.device)
    diff = idx[:, None] - idx[None, :]
    if weights is None:
        w = (diff != 0).double()
    elif weights == "linear":
        w = diff.abs()
    else:
        w = diff * diff
    return _result(1 - (w * cm).sum() / (w * expected).sum())
