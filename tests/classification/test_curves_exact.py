"""Exact mode (thresholds=None) of the curve metrics against scikit-learn and torchmetrics.

scikit-learn gets the float32 probabilities the metric stores (sigmoid/softmax of logits in
float32), so ties and values are the same on both sides.
"""

import warnings

import numpy as np
import pytest
import torch
import torchmetrics.functional.classification as tmf
from sklearn import metrics as skm

import torchtally.functional as F
from torchtally import (
    BinaryAUROC,
    BinaryAveragePrecision,
    BinaryPrecisionRecallCurve,
    BinaryROC,
    MulticlassAUROC,
    MultilabelAveragePrecision,
)

TOL = dict(rtol=1e-5, atol=1e-6)


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        yield


def _close(actual, expected, **tol):
    expected = expected if isinstance(expected, torch.Tensor) else torch.as_tensor(np.array(expected))
    torch.testing.assert_close(torch.as_tensor(actual).double(), expected.double(), equal_nan=True, **(tol or TOL))


def _binary_data(n=400, seed=0, logits=False, levels=20):
    g = torch.Generator().manual_seed(seed)
    target = torch.randint(0, 2, (n,), generator=g)
    scores = torch.rand(n, generator=g) * 0.6 + 0.4 * target  # informative
    scores = (scores * levels).round() / levels  # many ties
    if logits:
        scores = (scores - 0.5) * 8
    return scores, target


def _probs(preds):
    """What the metric stores: float32 probabilities."""
    p = preds.float()
    return p if (p.min() >= 0 and p.max() <= 1) else p.sigmoid()


@pytest.mark.parametrize("logits", [False, True])
@pytest.mark.parametrize("levels", [5, 20, 1000])
def test_binary_scalars_match_sklearn(logits, levels):
    preds, target = _binary_data(logits=logits, levels=levels)
    p, y = _probs(preds).double().numpy(), target.numpy()
    _close(F.binary_auroc(preds, target), skm.roc_auc_score(y, p))
    _close(F.binary_average_precision(preds, target), skm.average_precision_score(y, p))
    for max_fpr in (0.1, 0.35, 1.0):
        _close(F.binary_auroc(preds, target, max_fpr=max_fpr), skm.roc_auc_score(y, p, max_fpr=max_fpr))


def test_binary_curves_match_sklearn_and_torchmetrics():
    preds, target = _binary_data(levels=30)
    p, y = preds.double().numpy(), target.numpy()
    fpr, tpr, thr = F.binary_roc(preds, target)
    sk_fpr, sk_tpr, sk_thr = skm.roc_curve(y, p, drop_intermediate=False)
    _close(fpr, sk_fpr)
    _close(tpr, sk_tpr)
    assert thr[0] == 1.0 and np.isinf(sk_thr[0])  # the origin's threshold: 1.0 as torchmetrics, sklearn inf
    _close(thr[1:], sk_thr[1:])
    for ours, theirs in zip((fpr, tpr, thr), tmf.binary_roc(preds, target)):
        _close(ours, theirs)

    precision, recall, thr = F.binary_precision_recall_curve(preds, target)
    sk_p, sk_r, sk_t = skm.precision_recall_curve(y, p)
    _close(precision, sk_p)
    _close(recall, sk_r)
    _close(thr, sk_t)
    for ours, theirs in zip((precision, recall, thr), tmf.binary_precision_recall_curve(preds, target)):
        _close(ours, theirs)


def test_binary_ignore_index_and_extra_dims():
    preds, target = _binary_data(n=300, seed=3)
    target = target.clone()
    target[::7] = -1
    keep = target != -1
    p, y = preds[keep].double().numpy(), target[keep].numpy()
    _close(F.binary_auroc(preds, target, ignore_index=-1), skm.roc_auc_score(y, p))
    _close(F.binary_average_precision(preds, target, ignore_index=-1), skm.average_precision_score(y, p))
    # [N, 3] folds into 3N samples
    _close(F.binary_auroc(preds.view(100, 3), target.view(100, 3), ignore_index=-1), skm.roc_auc_score(y, p))


def test_binary_classes_accumulate_batches_like_one_call():
    preds, target = _binary_data(n=500, seed=5)
    p, y = preds.double().numpy(), target.numpy()
    metrics = [
        BinaryAUROC(),
        BinaryAUROC(max_fpr=0.2),
        BinaryAveragePrecision(),
        BinaryROC(),
        BinaryPrecisionRecallCurve(),
    ]
    for lo in range(0, 500, 64):
        for m in metrics:
            m.update(preds[lo : lo + 64], target[lo : lo + 64])
    _close(metrics[0].compute(), skm.roc_auc_score(y, p))
    _close(metrics[1].compute(), skm.roc_auc_score(y, p, max_fpr=0.2))
    _close(metrics[2].compute(), skm.average_precision_score(y, p))
    for ours, theirs in zip(metrics[3].compute(), tmf.binary_roc(preds, target)):
        _close(ours, theirs)
    for ours, theirs in zip(metrics[4].compute(), tmf.binary_precision_recall_curve(preds, target)):
        _close(ours, theirs)


def _multiclass_data(n=600, c=5, seed=1, logits=True):
    g = torch.Generator().manual_seed(seed)
    target = torch.randint(0, c, (n,), generator=g)
    preds = torch.randn(n, c, generator=g) + 1.5 * torch.nn.functional.one_hot(target, c)
    preds = (preds * 4).round() / 4  # ties
    return (preds if logits else preds.softmax(1)), target


@pytest.mark.parametrize("logits", [False, True])
def test_multiclass_scalars_match_sklearn(logits):
    preds, target = _multiclass_data(logits=logits)
    c = preds.shape[1]
    probs = preds.float().softmax(1) if logits else preds.float()
    onehot = torch.nn.functional.one_hot(target, c).numpy()
    p = probs.double().numpy()
    auc = [skm.roc_auc_score(onehot[:, k], p[:, k]) for k in range(c)]
    ap = [skm.average_precision_score(onehot[:, k], p[:, k]) for k in range(c)]
    support = onehot.sum(0)
    _close(F.multiclass_auroc(preds, target, c, average="none"), auc)
    _close(F.multiclass_auroc(preds, target, c, average=None), auc)
    _close(F.multiclass_auroc(preds, target, c), np.mean(auc))
    _close(F.multiclass_auroc(preds, target, c, average="weighted"), np.average(auc, weights=support))
    _close(F.multiclass_average_precision(preds, target, c, average="none"), ap)
    _close(F.multiclass_average_precision(preds, target, c), np.mean(ap))
    _close(F.multiclass_average_precision(preds, target, c, average="weighted"), np.average(ap, weights=support))
    # sklearn's own one-vs-rest on probability rows
    if not logits:
        rows = probs.double() / probs.double().sum(1, keepdim=True)
        _close(F.multiclass_auroc(rows, target, c), skm.roc_auc_score(target.numpy(), rows.numpy(), multi_class="ovr"))


@pytest.mark.parametrize("average", [None, "micro", "macro"])
def test_multiclass_curves_match_torchmetrics(average):
    preds, target = _multiclass_data(n=300, c=4, seed=2, logits=False)
    for fn, tm in (
        (F.multiclass_roc, tmf.multiclass_roc),
        (F.multiclass_precision_recall_curve, tmf.multiclass_precision_recall_curve),
    ):
        ours = fn(preds, target, 4, average=average)
        theirs = tm(preds, target, 4, average=average)
        for a, b in zip(ours, theirs):
            if isinstance(b, list):
                assert isinstance(a, list) and len(a) == len(b)
                for x, y in zip(a, b):
                    _close(x, y)
            else:
                _close(a, b)


def test_multiclass_ignore_index_and_extra_dims():
    preds, target = _multiclass_data(n=240, c=3, seed=4, logits=False)
    target = target.clone()
    target[::5] = 255
    keep = target != 255
    onehot = torch.nn.functional.one_hot(target[keep], 3).numpy()
    p = preds[keep].double().numpy()
    auc = [skm.roc_auc_score(onehot[:, k], p[:, k]) for k in range(3)]
    _close(F.multiclass_auroc(preds, target, 3, average="none", ignore_index=255), auc)
    # [N, C, 2] with target [N, 2]: class dim is dim 1
    p3 = preds.view(120, 2, 3).transpose(1, 2)
    _close(F.multiclass_auroc(p3, target.view(120, 2), 3, average="none", ignore_index=255), auc)
    m = MulticlassAUROC(3, average="none", ignore_index=255)
    m.update(preds[:100], target[:100]).update(preds[100:], target[100:])
    _close(m.compute(), auc)


def _multilabel_data(n=300, num_labels=4, seed=6):
    g = torch.Generator().manual_seed(seed)
    target = torch.randint(0, 2, (n, num_labels), generator=g)
    preds = ((torch.rand(n, num_labels, generator=g) + 0.5 * target) * 10).round() / 15
    return preds, target


@pytest.mark.parametrize("average", ["micro", "macro", "weighted", "none"])
def test_multilabel_scalars_match_sklearn(average):
    preds, target = _multilabel_data()
    p, y = preds.double().numpy(), target.numpy()
    sk_avg = None if average == "none" else average
    _close(F.multilabel_auroc(preds, target, 4, average=average), skm.roc_auc_score(y, p, average=sk_avg))
    _close(
        F.multilabel_average_precision(preds, target, 4, average=average),
        skm.average_precision_score(y, p, average=sk_avg),
    )


def test_multilabel_ignore_index_logits_and_curves():
    preds, target = _multilabel_data(n=200, num_labels=3, seed=7)
    logits = (preds - 0.4) * 6
    target = target.clone()
    target[::3, 1] = -100
    target[1::4, 2] = -100
    probs = logits.sigmoid()
    aucs, aps = [], []
    for k in range(3):
        keep = target[:, k] != -100
        y, p = target[keep, k].numpy(), probs[keep, k].double().numpy()
        aucs.append(skm.roc_auc_score(y, p))
        aps.append(skm.average_precision_score(y, p))
    _close(F.multilabel_auroc(logits, target, 3, average="none", ignore_index=-100), aucs)
    _close(F.multilabel_average_precision(logits, target, 3, average="none", ignore_index=-100), aps)
    keep = target != -100
    _close(
        F.multilabel_auroc(logits, target, 3, average="micro", ignore_index=-100),
        skm.roc_auc_score(target[keep].numpy(), probs[keep].double().numpy()),
    )
    for fn, tm in (
        (F.multilabel_roc, tmf.multilabel_roc),
        (F.multilabel_precision_recall_curve, tmf.multilabel_precision_recall_curve),
    ):
        for a, b in zip(fn(logits, target, 3, ignore_index=-100), tm(logits, target, 3, ignore_index=-100)):
            for x, y in zip(a, b):
                _close(x, y)


def test_multilabel_class_micro_over_batches():
    preds, target = _multilabel_data(n=256, num_labels=5, seed=8)
    m = MultilabelAveragePrecision(5, average="micro")
    for lo in range(0, 256, 50):
        m.update(preds[lo : lo + 50], target[lo : lo + 50])
    _close(m.compute(), skm.average_precision_score(target.numpy(), preds.double().numpy(), average="micro"))
