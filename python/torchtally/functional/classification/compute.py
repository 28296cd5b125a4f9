"""Classification results from the count states (shared by the classes and the functional forms).

Counts are int64; ratios are formed in float64 (exact for counts below 2**53) and returned as
float32, the dtype torchmetrics returns. Conventions, as torchmetrics 1.9 defines them:

* a ratio with a zero denominator is ``zero_division`` (0 unless the metric takes the option);
* average "micro" sums the counts over classes first; "macro" is the plain mean of the
  per-class scores, except that for multiclass a class that never occurs in target or preds
  (tp + fp + fn == 0) is left out, and for accuracy, precision and recall with top_k > 1 a
  class without support (tp + fn == 0); "weighted" weights by support (tp + fn); "none" returns
  the per-class scores; a zero total weight gives 0;
* multilabel accuracy counts correct elements, (tp + tn) / all, per label or pooled ("micro");
* ``multidim_average="samplewise"``: every count carries a leading sample dim [N, ...] and all
  of the above happens per sample (classes are always the last dim of tp/fp/tn/fn).
"""

import warnings
from typing import NamedTuple, Optional

import torch
from torch import Tensor

_FLOAT32_EPS = float(torch.finfo(torch.float32).eps)


class Stats(NamedTuple):
    """int64 counts: [C] per class, [N, C] per sample and class (samplewise); binary: [] or [N].
    ``kind``: binary | multiclass | multilabel. ``top_k`` > 1 marks multiclass top-k counts,
    whose macro average leaves out the classes without support (accuracy, precision, recall)."""

    tp: Tensor
    fp: Tensor
    tn: Tensor
    fn: Tensor
    kind: str
    top_k: int = 1


# -- counts from the states --------------------------------------------------------------------


def binary_stats(confmat: Tensor) -> Stats:
    """confmat [2, 2] or per sample [N, 2, 2] (row = target, column = prediction)."""
    return Stats(confmat[..., 1, 1], confmat[..., 0, 1], confmat[..., 0, 0], confmat[..., 1, 0], "binary")


def multilabel_stats(confmat: Tensor) -> Stats:
    """confmat [L, 2, 2] or per sample [N, L, 2, 2]."""
    return Stats(confmat[..., 1, 1], confmat[..., 0, 1], confmat[..., 0, 0], confmat[..., 1, 0], "multilabel")


def multiclass_stats(confmat: Tensor) -> Stats:
    """One-vs-rest counts of a [C, C] confusion matrix."""
    tp = confmat.diagonal()
    fp = confmat.sum(0) - tp
    fn = confmat.sum(1) - tp
    return Stats(tp, fp, confmat.sum() - tp - fp - fn, fn, "multiclass")


def multiclass_micro_stat_scores(confmat: Tensor) -> Tensor:
    """``stat_scores(multiclass_stats(confmat), "micro")`` from two sums of a [C, C] confusion
    matrix: over the classes tp = trace, fp = fn = total - trace, tn = (C - 2) total + trace
    (each sample is a true negative of the C - 2 classes it is neither of), support = total."""
    c = confmat.shape[0]
    trace, total = confmat.diagonal().sum(), confmat.sum()
    if confmat.is_cpu:  # five Python ints into one tensor: fewer tensor ops than the arithmetic
        t, n = int(trace), int(total)
        return torch.tensor([t, n - t, (c - 2) * n + t, n - t, n], dtype=torch.int64)
    return torch.stack([trace, total - trace, (c - 2) * total + trace, total - trace, total])


def topk_stats(state: Tensor, top_k: int) -> Stats:
    """Counts of the top-k state [C, 3] = (predicted, hit, support) per class, where a sample's
    prediction is its target when that is among its k best classes and its best class otherwise
    (torchmetrics' top-k rule): tp = hits, fp = predicted - hits, fn = support - hits."""
    predicted, hits, support = state[:, 0], state[:, 1], state[:, 2]
    tp, fp, fn = hits, predicted - hits, support - hits
    return Stats(tp, fp, support.sum() - tp - fp - fn, fn, "multiclass", top_k)


def sample_stats(table: Tensor, top_k: int = 1) -> Stats:
    """Per-sample multiclass counts [N, C, 4] = (tp, fp, tn, fn)."""
    return Stats(table[..., 0], table[..., 1], table[..., 2], table[..., 3], "multiclass", top_k)


# -- ratios and averages ------------------------------------------------------------------------


def _ratio(num: Tensor, den: Tensor, zero_division: float = 0.0, dtype: torch.dtype = torch.float64) -> Tensor:
    """num / den divided in float64, ``zero_division`` where den is 0; returned as ``dtype``."""
    if num.is_cpu and den.is_cpu and not num.dim() and not den.dim():
        # One number (a micro average, at every step under a per-step sync): Python's float
        # division is the same IEEE double division as the tensor path below, and torch.full
        # rounds it to ``dtype`` as .to() does (and costs a third of torch.tensor), without the
        # seven tensor ops. (Not on a GPU: reading the numbers would wait for the device.)
        d = float(den.item())
        return torch.full((), float(num.item()) / d if d != 0 else float(zero_division), dtype=dtype, device=num.device)
    num, den = num.double(), den.double()
    ratio = torch.where(den != 0, num / torch.where(den != 0, den, 1.0), zero_division)
    return ratio if dtype == torch.float64 else ratio.to(dtype)


def _result(x: Tensor) -> Tensor:
    return x.to(torch.float32)


def _average(score: Tensor, s: Stats, average: str, support_rule: bool = False) -> Tensor:
    """Reduce per-class ``score`` over the class dim (the last) by "macro" / "weighted", or return
    it ("none", binary). ``support_rule``: macro leaves out classes without support when top_k > 1."""
    if s.kind == "binary" or average == "none":
        return _result(score)
    if average == "weighted":
        weights = (s.tp + s.fn).double()
    else:
        weights = torch.ones_like(score)
        if s.kind == "multiclass":
            absent = (s.tp + s.fn == 0) if (support_rule and s.top_k > 1) else (s.tp + s.fp + s.fn == 0)
            weights = weights.masked_fill(absent, 0.0)
    return _result(_ratio((weights * score).sum(-1), weights.sum(-1)))


def _micro(s: Stats, average: str) -> bool:
    return average == "micro" and s.kind != "binary"


def _correct_and_total(s: Stats):
    if s.kind in ("binary", "multilabel"):
        return s.tp + s.tn, s.tp + s.tn + s.fp + s.fn
    return s.tp, s.tp + s.fn  # multiclass: per class the recall; pooled, the share of correct samples


def accuracy(s: Stats, average: str) -> Tensor:
    correct, total = _correct_and_total(s)
    if _micro(s, average):
        return _result(_ratio(correct.sum(-1), total.sum(-1)))
    return _average(_ratio(correct, total), s, average, support_rule=True)


def micro_accuracy(confmat: Tensor) -> Tensor:
    """accuracy(multiclass_stats(confmat), "micro") from a [C, C] confusion matrix: the correct
    samples are its trace and all samples its sum (per class, tp + fn is the row sum), the same
    int64 counts, so the same value, without the other counts (compute runs at every step)."""
    return _ratio(confmat.trace(), confmat.sum(), dtype=torch.float32)  # as _result(_ratio(...))


def macro_accuracy(confmat: Tensor) -> Tensor:
    """accuracy(multiclass_stats(confmat), "macro") (top_k = 1) from a [C, C] confusion matrix:
    the mean recall over the classes that occur in target or preds. The same int64 counts enter
    the same float64 operations (recall = tp / row sum; a class occurs when tp + fp + fn is not
    0, as is its row sum + column sum, 2 tp + fn + fp; its weight 1.0 or 0.0), so the same bits,
    in half the tensor ops of the general path (compute runs at every step)."""
    support = confmat.sum(1)  # tp + fn
    weights = ((support + confmat.sum(0)) != 0).double()
    # tp / support as _ratio divides it; a class without support has tp = 0, so 0 / 1 = 0
    recall = confmat.diagonal().double() / support.clamp(min=1).double()
    return _ratio((weights * recall).sum(-1), weights.sum(-1), dtype=torch.float32)  # as _result(_ratio(...))


def hamming_distance(s: Stats, average: str) -> Tensor:
    """1 - accuracy, taken per class before averaging (so a class or sample with nothing to
    count scores 1, and an average over no class is 0). As torchmetrics, "macro" leaves out the
    classes absent from target and preds whatever top_k (accuracy's rule differs under top_k)."""
    correct, total = _correct_and_total(s)
    if _micro(s, average):
        return _result(1.0 - _ratio(correct.sum(-1), total.sum(-1)))
    return _average(1.0 - _ratio(correct, total), s, average)


def precision(s: Stats, average: str, zero_division: float = 0.0) -> Tensor:
    return _tp_ratio(s, s.fp, average, zero_division)


def recall(s: Stats, average: str, zero_division: float = 0.0) -> Tensor:
    return _tp_ratio(s, s.fn, average, zero_division)


def _tp_ratio(s: Stats, other: Tensor, average: str, zero_division: float) -> Tensor:
    if _micro(s, average):
        return _result(_ratio(s.tp.sum(-1), (s.tp + other).sum(-1), zero_division))
    return _average(_ratio(s.tp, s.tp + other, zero_division), s, average, support_rule=True)


def fbeta(s: Stats, beta: float, average: str, zero_division: float = 0.0) -> Tensor:
    """(1 + beta^2) tp / ((1 + beta^2) tp + beta^2 fn + fp)."""
    b2 = beta * beta
    tp, fp, fn = s.tp.double(), s.fp.double(), s.fn.double()
    if _micro(s, average):
        tp, fp, fn = tp.sum(-1), fp.sum(-1), fn.sum(-1)
    score = _ratio((1 + b2) * tp, (1 + b2) * tp + b2 * fn + fp, zero_division)
    return _result(score) if _micro(s, average) else _average(score, s, average)


def specificity(s: Stats, average: str) -> Tensor:
    if _micro(s, average):
        return _result(_ratio(s.tn.sum(-1), (s.tn + s.fp).sum(-1)))
    return _average(_ratio(s.tn, s.tn + s.fp), s, average)


def negative_predictive_value(s: Stats, average: str, zero_division: float = 0.0) -> Tensor:
    """tn / (tn + fn): the precision of the negative class. "macro" leaves out multiclass classes
    as precision does (without support under top_k > 1, absent from target and preds otherwise)."""
    if _micro(s, average):
        return _result(_ratio(s.tn.sum(-1), (s.tn + s.fn).sum(-1), zero_division))
    return _average(_ratio(s.tn, s.tn + s.fn, zero_division), s, average, support_rule=True)


def stat_scores(s: Stats, average: str) -> Tensor:
    """[tp, fp, tn, fn, support] (int64) per class ("none") or summed ("micro"; binary: [5]);
    "macro" is their float mean over all classes, "weighted" the support-weighted mean (a zero
    total support gives NaN, as torchmetrics). Samplewise: one such row per sample."""
    table = torch.stack([s.tp, s.fp, s.tn, s.fn, s.tp + s.fn], dim=-1)
    if s.kind == "binary" or average == "none":
        return table
    if average == "micro":
        return table.sum(-2)
    if average == "macro":
        return _result(table.double().mean(-2))
    support = (s.tp + s.fn).double()
    if s.kind == "multilabel":
        # torchmetrics normalises multilabel weights by the support of all samples together,
        # also per sample (samplewise); multiclass normalises per sample.
        total = support.sum()
    else:
        total = support.sum(-1, keepdim=True)
    return _result((table.double() * (support / total)[..., None]).sum(-2))


# -- metrics of the whole confusion matrix ------------------------------------------------------


def confusion_matrix(confmat: Tensor, normalize: Optional[str]) -> Tensor:
    """The counts (int64, a copy) or normalised over targets ("true": rows), predictions ("pred":
    columns) or "all" (float32). A 0/0 entry is 0, with torchmetrics' warning that names how many
    there were. Multilabel [L, 2, 2] is normalised per label."""
    if normalize is None:
        return confmat.clone()
    counts = confmat.double()
    dims = {"true": (-1,), "pred": (-2,), "all": (-2, -1)}[normalize]
    totals = counts.sum(dim=dims, keepdim=True).expand_as(counts)
    empty = int((totals == 0).sum())
    if empty:
        warnings.warn(
            f"{empty} NaN values found in confusion matrix have been replaced with zeros.", UserWarning, stacklevel=3
        )
    return _result(_ratio(counts, totals))


def jaccard_index(
    confmat: Tensor, kind: str, average: str, ignore_index: Optional[int] = None, zero_division: float = 0.0
) -> Tensor:
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
    return eps**0.5 * num / den**0.5


def cohen_kappa(confmat: Tensor, weights: Optional[str]) -> Tensor:
    """1 - sum(w * observed) / sum(w * expected), expected = outer(row sums, column sums) / total;
    w = 1 off the diagonal (None), ``|i - j|`` ("linear") or ``(i - j)^2`` ("quadratic")."""
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
