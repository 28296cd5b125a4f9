"""scikit-learn references for the classification tests, and their random data.

Per-class values come from scikit-learn; where torchmetrics defines an average differently from
scikit-learn, the rule is applied here explicitly (see MACRO below), so each test states which
convention it expects.

MACRO (torchmetrics, multiclass): the mean over the classes that occur in target or preds;
scikit-learn's macro averages over every label passed in ``labels``. Multilabel macro counts
every label in both.
"""

import numpy as np
import sklearn.metrics as skm
import torch

STAT_METRICS = ("accuracy", "precision", "recall", "f1_score", "fbeta_score", "specificity", "jaccard_index", "dice")
AVERAGES = ("micro", "macro", "weighted", "none")
BETA = 0.7


def gen(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def binary_data(n: int, seed: int, kind: str = "probs"):
    """(preds, target): preds probabilities, logits (values outside [0, 1]) or 0/1 labels."""
    g = gen(seed)
    target = torch.randint(0, 2, (n,), generator=g)
    logits = torch.randn(n, generator=g) * 2 + (target.float() - 0.5)
    preds = {"probs": logits.sigmoid(), "logits": logits, "labels": (logits > 0).long()}[kind]
    return preds, target


def multiclass_data(n: int, c: int, seed: int):
    """(scores [N, C] logits, target [N]), mildly informative."""
    g = gen(seed)
    target = torch.randint(0, c, (n,), generator=g)
    scores = torch.randn(n, c, generator=g)
    scores[torch.arange(n), target] += 0.8
    return scores, target


def multilabel_data(n: int, labels: int, seed: int, kind: str = "probs"):
    g = gen(seed)
    target = torch.randint(0, 2, (n, labels), generator=g)
    logits = torch.randn(n, labels, generator=g) * 2 + (target.float() - 0.5)
    preds = {"probs": logits.sigmoid(), "logits": logits, "labels": (logits > 0).long()}[kind]
    return preds, target


# -- predicted labels, computed independently of torchtally (float64 numpy) -------------------


def binary_labels(preds: torch.Tensor, threshold: float = 0.5) -> np.ndarray:
    p = preds.double().numpy()
    if preds.is_floating_point():
        if p.size and (p.min() < 0 or p.max() > 1):
            p = 1 / (1 + np.exp(-p))
        return (p > threshold).astype(np.int64)
    return p.astype(np.int64)


def multiclass_labels(preds: torch.Tensor) -> np.ndarray:
    return preds.numpy().argmax(1) if preds.is_floating_point() else preds.numpy()


def _div(num, den):
    num, den = np.asarray(num, dtype=np.float64), np.asarray(den, dtype=np.float64)
    return np.where(den != 0, num / np.where(den != 0, den, 1), 0.0)


def _counts(mcm: np.ndarray):
    """tp, fp, tn, fn per class from scikit-learn's multilabel_confusion_matrix ([[tn, fp], [fn, tp]])."""
    return mcm[:, 1, 1], mcm[:, 0, 1], mcm[:, 0, 0], mcm[:, 1, 0]


# -- binary -----------------------------------------------------------------------------------


def sk_binary(name: str, t: np.ndarray, p: np.ndarray, **kw):
    if name == "accuracy":
        return skm.accuracy_score(t, p)
    if name == "hamming_distance":
        return skm.hamming_loss(t, p)
    if name in ("precision", "recall", "f1_score", "dice", "jaccard_index"):
        fn = {
            "precision": skm.precision_score,
            "recall": skm.recall_score,
            "f1_score": skm.f1_score,
            "dice": skm.f1_score,
            "jaccard_index": skm.jaccard_score,
        }[name]
        return fn(t, p, labels=[0, 1], zero_division=0)
    if name == "fbeta_score":
        return skm.fbeta_score(t, p, beta=BETA, labels=[0, 1], zero_division=0)
    if name == "specificity":
        return skm.recall_score(t, p, pos_label=0, labels=[0, 1], zero_division=0)
    if name == "stat_scores":
        tn, fp, fn, tp = skm.confusion_matrix(t, p, labels=[0, 1]).ravel()
        return np.array([tp, fp, tn, fn, tp + fn])
    if name == "confusion_matrix":
        return skm.confusion_matrix(t, p, labels=[0, 1], normalize=kw.get("normalize"))
    if name == "matthews_corrcoef":
        return skm.matthews_corrcoef(t, p)
    if name == "cohen_kappa":
        return skm.cohen_kappa_score(t, p, labels=[0, 1], weights=kw.get("weights"))
    raise KeyError(name)


# -- multiclass -------------------------------------------------------------------------------


def _per_class(name: str, t, p, labels):
    mcm = skm.multilabel_confusion_matrix(t, p, labels=labels)
    tp, fp, tn, fn = _counts(mcm)
    common = dict(labels=labels, average=None, zero_division=0)
    per = {
        "accuracy": lambda: skm.recall_score(t, p, **common),
        "hamming_distance": lambda: 1 - skm.recall_score(t, p, **common),
        "precision": lambda: skm.precision_score(t, p, **common),
        "recall": lambda: skm.recall_score(t, p, **common),
        "f1_score": lambda: skm.f1_score(t, p, **common),
        "dice": lambda: skm.f1_score(t, p, **common),
        "fbeta_score": lambda: skm.fbeta_score(t, p, beta=BETA, **common),
        "specificity": lambda: _div(tn, tn + fp),
        "jaccard_index": lambda: skm.jaccard_score(t, p, **common),
    }[name]()
    return np.asarray(per, dtype=np.float64), tp, fp, tn, fn


def sk_multiclass(name: str, t: np.ndarray, p: np.ndarray, c: int, average: str = "macro", **kw):
    labels = list(range(c))
    if name == "confusion_matrix":
        return skm.confusion_matrix(t, p, labels=labels, normalize=kw.get("normalize"))
    if name == "matthews_corrcoef":
        return skm.matthews_corrcoef(t, p)
    if name == "cohen_kappa":
        return skm.cohen_kappa_score(t, p, labels=labels, weights=kw.get("weights"))
    mcm = skm.multilabel_confusion_matrix(t, p, labels=labels)
    if name == "stat_scores":
        return _stat_table(mcm, average)
    per, tp, fp, tn, fn = _per_class(name, t, p, labels)
    support = tp + fn
    if average == "none":
        return per
    if average == "weighted":
        return _div((per * support).sum(), support.sum())
    if average == "macro":
        present = (tp + fp + fn) > 0
        ignore = kw.get("ignore_index")
        if name == "jaccard_index" and ignore is not None and 0 <= ignore < c:
            present[ignore] = False
        return per[present].mean() if present.any() else 0.0
    # micro: scikit-learn's own pooled averages
    if name == "accuracy":
        return skm.accuracy_score(t, p)
    if name == "hamming_distance":
        return skm.hamming_loss(t, p)
    if name == "specificity":
        return _div(tn.sum(), (tn + fp).sum())
    if name == "jaccard_index":  # torchmetrics leaves an in-range ignore_index class out of the pool
        ignore = kw.get("ignore_index")
        pooled = [j for j in labels if j != ignore]
        return skm.jaccard_score(t, p, labels=pooled, average="micro", zero_division=0)
    if name == "fbeta_score":
        return skm.fbeta_score(t, p, beta=BETA, labels=labels, average="micro", zero_division=0)
    fn_ = {
        "precision": skm.precision_score,
        "recall": skm.recall_score,
        "f1_score": skm.f1_score,
        "dice": skm.f1_score,
    }[name]
    return fn_(t, p, labels=labels, average="micro", zero_division=0)


def _stat_table(mcm: np.ndarray, average: str):
    tp, fp, tn, fn = _counts(mcm)
    table = np.stack([tp, fp, tn, fn, tp + fn], axis=1)
    if average == "none":
        return table
    if average == "micro":
        return table.sum(0)
    if average == "macro":
        return table.mean(0)
    return (table * (tp + fn)[:, None] / (tp + fn).sum()).sum(0)


def sk_topk_accuracy(t: np.ndarray, scores: np.ndarray, c: int, k: int, average: str):
    """Top-k accuracy: scikit-learn's top_k_accuracy_score, pooled or per target class."""
    labels = list(range(c))
    if average == "micro":
        return skm.top_k_accuracy_score(t, scores, k=k, labels=labels)
    per = np.array(
        [
            skm.top_k_accuracy_score(t[t == j], scores[t == j], k=k, labels=labels) if (t == j).any() else 0.0
            for j in labels
        ]
    )
    support = np.bincount(t, minlength=c)
    if average == "none":
        return per
    if average == "weighted":
        return (per * support).sum() / support.sum()
    return per[support > 0].mean()


# -- multilabel -------------------------------------------------------------------------------


def sk_multilabel(name: str, t: np.ndarray, p: np.ndarray, average: str = "macro", **kw):
    mcm = skm.multilabel_confusion_matrix(t, p)
    tp, fp, tn, fn = _counts(mcm)
    if name == "confusion_matrix":
        norm = kw.get("normalize")
        return np.stack(
            [skm.confusion_matrix(t[:, j], p[:, j], labels=[0, 1], normalize=norm) for j in range(t.shape[1])]
        )
    if name == "matthews_corrcoef":
        return skm.matthews_corrcoef(t.ravel(), p.ravel())
    if name == "stat_scores":
        return _stat_table(mcm, average)
    avg = None if average == "none" else average
    if name in ("accuracy", "hamming_distance"):
        if average == "micro":
            wrong = skm.hamming_loss(t, p)
            return wrong if name == "hamming_distance" else 1 - wrong
        per = np.array([skm.accuracy_score(t[:, j], p[:, j]) for j in range(t.shape[1])])
        per = 1 - per if name == "hamming_distance" else per
    elif name == "specificity":
        if average == "micro":
            return _div(tn.sum(), (tn + fp).sum())
        per = _div(tn, tn + fp)
    else:
        common = dict(average=avg, zero_division=0)
        if name == "fbeta_score":
            return skm.fbeta_score(t, p, beta=BETA, **common)
        fn_ = {
            "precision": skm.precision_score,
            "recall": skm.recall_score,
            "f1_score": skm.f1_score,
            "dice": skm.f1_score,
            "jaccard_index": skm.jaccard_score,
        }[name]
        return fn_(t, p, **common)
    support = tp + fn
    if average == "none":
        return per
    if average == "weighted":
        return _div((per * support).sum(), support.sum())
    return per.mean()
