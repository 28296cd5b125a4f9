"""Binned mode (thresholds given) of the curve metrics against torchmetrics' binned mode.

Counts must be identical (TP/FP at every threshold from the histogram's suffix sums vs
torchmetrics' multi-threshold confusion matrix), areas and curves equal to float tolerance.
Both kernel backends (C core and torch reference) are run.
"""

import warnings

import pytest
import torch
import torchmetrics.classification as tmc
import torchmetrics.functional.classification as tmf

import torchtally.functional as F
from torchtally import (
    BinaryAUROC,
    BinaryROC,
    MulticlassAveragePrecision,
    MulticlassROC,
    MultilabelAUROC,
    MultilabelPrecisionRecallCurve,
    kernels,
)
from torchtally.functional.curves.compute import binned_counts

TOL = dict(rtol=1e-5, atol=1e-6)
BACKENDS = ["reference"] + (["c"] if kernels.has_c() else [])
THRESHOLDS = [2, 11, 100, [0.0, 0.25, 0.3, 0.8], torch.tensor([0.1, 0.1, 0.5, 0.95], dtype=torch.float64)]


@pytest.fixture(params=BACKENDS, autouse=True)
def backend(request):
    previous = kernels.set_backend(request.param)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        yield request.param
    kernels.set_backend(previous)


def _close(actual, expected):
    torch.testing.assert_close(
        torch.as_tensor(actual).double(), torch.as_tensor(expected).double(), equal_nan=True, **TOL
    )


def _binary(n=700, seed=0, logits=False):
    g = torch.Generator().manual_seed(seed)
    target = torch.randint(0, 2, (n,), generator=g)
    preds = torch.rand(n, generator=g) * 0.7 + 0.3 * target
    preds[:20] = torch.tensor([0.0, 0.25, 0.5, 1.0, 0.1]).repeat(4)  # scores exactly on thresholds
    return ((preds - 0.5) * 10 if logits else preds), target


def _ids(v):
    return type(v).__name__ if not isinstance(v, int) else f"T{v}"


@pytest.mark.parametrize("thresholds", THRESHOLDS + [1000], ids=_ids)
@pytest.mark.parametrize("logits", [False, True])
def test_binary_counts_and_values_match_torchmetrics(thresholds, logits):
    preds, target = _binary(logits=logits)
    ours, theirs = BinaryAUROC(thresholds=thresholds), tmc.BinaryROC(thresholds=thresholds)
    for lo in range(0, len(preds), 128):
        ours.update(preds[lo : lo + 128], target[lo : lo + 128])
        theirs.update(preds[lo : lo + 128], target[lo : lo + 128])
    counts = binned_counts(ours.hist, ours.thresholds)
    confmat = theirs.confmat  # [T, target, prediction]
    assert torch.equal(counts.tp.flip(1)[0].long(), confmat[:, 1, 1])
    assert torch.equal(counts.fp.flip(1)[0].long(), confmat[:, 0, 1])
    assert torch.equal(counts.pos.long(), confmat[0, 1].sum().reshape(1))

    _close(ours.compute(), tmf.binary_auroc(preds, target, thresholds=thresholds))
    _close(
        F.binary_auroc(preds, target, thresholds=thresholds, max_fpr=0.3),
        tmf.binary_auroc(preds, target, thresholds=thresholds, max_fpr=0.3),
    )
    _close(
        F.binary_average_precision(preds, target, thresholds=thresholds),
        tmf.binary_average_precision(preds, target, thresholds=thresholds),
    )
    for a, b in zip(
        F.binary_roc(preds, target, thresholds=thresholds), tmf.binary_roc(preds, target, thresholds=thresholds)
    ):
        _close(a, b)
    pr = tmf.binary_precision_recall_curve(preds, target, thresholds=thresholds)
    for a, b in zip(F.binary_precision_recall_curve(preds, target, thresholds=thresholds), pr):
        _close(a, b)


def test_binary_ignore_index_and_class_curve():
    preds, target = _binary(seed=1)
    target = target.clone()
    target[::6] = -1
    _close(
        F.binary_auroc(preds, target, thresholds=50, ignore_index=-1),
        tmf.binary_auroc(preds, target, thresholds=50, ignore_index=-1),
    )
    m = BinaryROC(thresholds=50, ignore_index=-1)
    m.update(preds[:300], target[:300]).update(preds[300:], target[300:])
    for a, b in zip(m.compute(), tmf.binary_roc(preds, target, thresholds=50, ignore_index=-1)):
        _close(a, b)


def _multiclass(n=500, c=4, seed=2):
    g = torch.Generator().manual_seed(seed)
    target = torch.randint(0, c, (n,), generator=g)
    return torch.randn(n, c, generator=g) + torch.nn.functional.one_hot(target, c), target


@pytest.mark.parametrize("thresholds", THRESHOLDS[1:], ids=_ids)
def test_multiclass_counts_and_values_match_torchmetrics(thresholds):
    preds, target = _multiclass()
    target[::9] = 7
    ours = MulticlassAveragePrecision(4, thresholds=thresholds, average="none", ignore_index=7)
    theirs = tmc.MulticlassROC(4, thresholds=thresholds, ignore_index=7)
    for lo in range(0, 500, 100):
        ours.update(preds[lo : lo + 100], target[lo : lo + 100])
        theirs.update(preds[lo : lo + 100], target[lo : lo + 100])
    counts = binned_counts(ours.hist, ours.thresholds)
    assert torch.equal(counts.tp.flip(1).long(), theirs.confmat[:, :, 1, 1].T)
    assert torch.equal(counts.fp.flip(1).long(), theirs.confmat[:, :, 0, 1].T)
    kw = dict(thresholds=thresholds, ignore_index=7)
    _close(ours.compute(), tmf.multiclass_average_precision(preds, target, 4, average="none", **kw))
    for average in ("macro", "weighted", "none"):
        _close(
            F.multiclass_auroc(preds, target, 4, average=average, **kw),
            tmf.multiclass_auroc(preds, target, 4, average=average, **kw),
        )
        _close(
            F.multiclass_average_precision(preds, target, 4, average=average, **kw),
            tmf.multiclass_average_precision(preds, target, 4, average=average, **kw),
        )
    for average in (
        None,
        "micro",
        "macro",
    ):  # torchmetrics' class breaks on binned "micro": its functional is the reference
        for fn, tm in (
            (F.multiclass_roc, tmf.multiclass_roc),
            (F.multiclass_precision_recall_curve, tmf.multiclass_precision_recall_curve),
        ):
            for a, b in zip(fn(preds, target, 4, average=average, **kw), tm(preds, target, 4, average=average, **kw)):
                _close(a, b)


def test_multiclass_roc_class_micro_equals_pooled_binary():
    preds, target = _multiclass(seed=3)
    m = MulticlassROC(4, thresholds=20, average="micro")
    m.update(preds[:250], target[:250]).update(preds[250:], target[250:])
    probs = preds.softmax(1)  # each batch holds logits
    onehot = torch.nn.functional.one_hot(target, 4)
    for a, b in zip(m.compute(), tmf.binary_roc(probs.flatten(), onehot.flatten(), thresholds=20)):
        _close(a, b)


def _multilabel(n=400, num_labels=3, seed=4):
    g = torch.Generator().manual_seed(seed)
    target = torch.randint(0, 2, (n, num_labels), generator=g)
    return torch.rand(n, num_labels, generator=g) * 0.8 + 0.2 * target, target


@pytest.mark.parametrize("thresholds", THRESHOLDS[1:], ids=_ids)
def test_multilabel_counts_and_values_match_torchmetrics(thresholds):
    preds, target = _multilabel()
    target[::5, 0] = -1
    ours = MultilabelAUROC(3, thresholds=thresholds, average="none", ignore_index=-1)
    theirs = tmc.MultilabelROC(3, thresholds=thresholds, ignore_index=-1)
    for lo in range(0, 400, 90):
        ours.update(preds[lo : lo + 90], target[lo : lo + 90])
        theirs.update(preds[lo : lo + 90], target[lo : lo + 90])
    counts = binned_counts(ours.hist, ours.thresholds)
    assert torch.equal(counts.tp.flip(1).long(), theirs.confmat[:, :, 1, 1].T)
    assert torch.equal(counts.fp.flip(1).long(), theirs.confmat[:, :, 0, 1].T)
    kw = dict(thresholds=thresholds, ignore_index=-1)
    for average in ("micro", "macro", "weighted", "none"):
        _close(
            F.multilabel_auroc(preds, target, 3, average=average, **kw),
            tmf.multilabel_auroc(preds, target, 3, average=average, **kw),
        )
        _close(
            F.multilabel_average_precision(preds, target, 3, average=average, **kw),
            tmf.multilabel_average_precision(preds, target, 3, average=average, **kw),
        )
    m = MultilabelPrecisionRecallCurve(3, **kw)
    m.update(preds[:123], target[:123]).update(preds[123:], target[123:])
    for a, b in zip(m.compute(), tmf.multilabel_precision_recall_curve(preds, target, 3, **kw)):
        _close(a, b)
    for a, b in zip(F.multilabel_roc(preds, target, 3, **kw), tmf.multilabel_roc(preds, target, 3, **kw)):
        _close(a, b)


def test_logits_decision_is_per_batch_as_torchmetrics():
    preds, target = _binary(n=300, seed=5)
    batches = [(preds[:150], target[:150]), ((preds[150:] - 0.5) * 6, target[150:])]  # probs, then logits
    ours, theirs = BinaryAUROC(thresholds=30), tmc.BinaryAUROC(thresholds=30)
    for p, t in batches:
        ours.update(p, t)
        theirs.update(p, t)
    _close(ours.compute(), theirs.compute())


def test_state_is_order_T_and_int64():
    m = MulticlassROC(10, thresholds=1000)
    m.update(*_multiclass(n=5000, c=10))
    assert m.hist.shape == (10, 1001, 2) and m.hist.dtype == torch.int64
    assert int(m.hist.sum()) == 5000 * 10
