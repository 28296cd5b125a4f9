"""Curve metrics: edge cases, bad input, state layout (bytes per sample) and state sharing."""

import warnings

import numpy as np
import pytest
import torch
import torchmetrics.functional.classification as tmf
from sklearn import metrics as skm
from support.doctests import package_doctests
from support.metric_tester import assert_rejects, states_of

import torchtally.functional as F
from torchtally import (
    BinaryAUROC,
    BinaryAveragePrecision,
    BinaryPrecisionRecallCurve,
    BinaryROC,
    MetricCollection,
    MulticlassAUROC,
    MulticlassAveragePrecision,
    MulticlassPrecisionRecallCurve,
    MulticlassROC,
    MultilabelAUROC,
    MultilabelAveragePrecision,
    MultilabelROC,
    NotComputableError,
    kernels,
)

MODES = [None, 20]  # exact, binned


def _quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return fn(*args, **kwargs)


# -- undefined values -------------------------------------------------------------------------


@pytest.mark.parametrize("thresholds", MODES)
def test_single_class_binary_auroc_is_nan_with_warning(thresholds):
    preds = torch.tensor([0.1, 0.4, 0.8])
    for target in (torch.zeros(3, dtype=torch.long), torch.ones(3, dtype=torch.long)):
        with pytest.warns(UserWarning, match="AUROC is undefined"):
            assert torch.isnan(F.binary_auroc(preds, target, thresholds=thresholds))
        with pytest.warns(UserWarning, match="AUROC is undefined"):
            assert torch.isnan(F.binary_auroc(preds, target, thresholds=thresholds, max_fpr=0.5))


@pytest.mark.parametrize("thresholds", MODES)
def test_average_precision_without_positives_is_zero_as_sklearn(thresholds):
    preds, target = torch.tensor([0.1, 0.4, 0.8]), torch.zeros(3, dtype=torch.long)
    with pytest.warns(UserWarning, match="no positive sample"):
        value = F.binary_average_precision(preds, target, thresholds=thresholds)
    assert value.item() == 0.0
    assert _quiet(skm.average_precision_score, target.numpy(), preds.numpy()) == 0.0
    ones = torch.ones(3, dtype=torch.long)
    assert F.binary_average_precision(preds, ones, thresholds=thresholds).item() == pytest.approx(1.0)


def test_single_class_curves_follow_torchmetrics():
    preds = torch.tensor([0.1, 0.4, 0.4, 0.8])
    for target in (torch.zeros(4, dtype=torch.long), torch.ones(4, dtype=torch.long)):
        for thresholds in MODES:
            for ours, theirs in (
                (F.binary_roc, tmf.binary_roc),
                (F.binary_precision_recall_curve, tmf.binary_precision_recall_curve),
            ):
                for a, b in zip(
                    ours(preds, target, thresholds=thresholds), _quiet(theirs, preds, target, thresholds=thresholds)
                ):
                    torch.testing.assert_close(a, b, equal_nan=True)


def _assert_curves_equal(ours, theirs):
    assert type(ours) is type(theirs) and len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        if isinstance(b, list):
            _assert_curves_equal(a, b)
        else:
            torch.testing.assert_close(a, b, equal_nan=True)


@pytest.mark.parametrize("thresholds", MODES)
def test_curves_of_a_column_without_positives_follow_torchmetrics(thresholds):
    """Per class / label curves where one column has no positive (and one label no negative):
    the values torchmetrics gives (recall NaN for an exact multiclass class, 1 for an exact
    label, NaN binned; TPR/FPR 0), each with a warning naming the column."""
    g = torch.Generator().manual_seed(3)
    preds, target = torch.rand(60, 4, generator=g), torch.randint(0, 3, (60,), generator=g)  # class 3 absent
    for ours, theirs in (
        (F.multiclass_roc, tmf.multiclass_roc),
        (F.multiclass_precision_recall_curve, tmf.multiclass_precision_recall_curve),
    ):
        with pytest.warns(UserWarning, match=r"no positive sample for class \[3\]"):
            got = ours(preds, target, 4, thresholds=thresholds)
        _assert_curves_equal(got, _quiet(theirs, preds, target, 4, thresholds=thresholds))
    labels = torch.randint(0, 2, (60, 3), generator=g)
    labels[:, 1], labels[:, 2] = 0, 1  # label 1: no positive; label 2: no negative
    ml_preds = torch.rand(60, 3, generator=g)
    with pytest.warns(UserWarning, match=r"no negative sample for label \[2\]"):
        got = F.multilabel_roc(ml_preds, labels, 3, thresholds=thresholds)
    _assert_curves_equal(got, _quiet(tmf.multilabel_roc, ml_preds, labels, 3, thresholds=thresholds))
    with pytest.warns(UserWarning, match=r"no positive sample for label \[1\]"):
        got = F.multilabel_precision_recall_curve(ml_preds, labels, 3, thresholds=thresholds)
    _assert_curves_equal(got, _quiet(tmf.multilabel_precision_recall_curve, ml_preds, labels, 3, thresholds=thresholds))


@pytest.mark.parametrize("thresholds", MODES)
def test_class_never_present(thresholds):
    g = torch.Generator().manual_seed(0)
    target = torch.randint(0, 3, (200,), generator=g)  # class 3 never occurs
    preds = torch.rand(200, 4, generator=g)
    with pytest.warns(UserWarning, match=r"class \[3\]"):
        per_class = F.multiclass_auroc(preds, target, 4, average="none", thresholds=thresholds)
    assert torch.isnan(per_class[3]) and not torch.isnan(per_class[:3]).any()
    macro = _quiet(F.multiclass_auroc, preds, target, 4, thresholds=thresholds)
    torch.testing.assert_close(macro, per_class[:3].mean())  # NaN classes are skipped
    weighted = _quiet(F.multiclass_auroc, preds, target, 4, average="weighted", thresholds=thresholds)
    support = torch.bincount(target, minlength=4)[:3].float()
    torch.testing.assert_close(weighted, (per_class[:3] * support).sum() / support.sum())
    if thresholds is None:
        onehot = torch.nn.functional.one_hot(target, 4).numpy()
        sk = [skm.roc_auc_score(onehot[:, k], preds[:, k].double().numpy()) for k in range(3)]
        torch.testing.assert_close(per_class[:3].double(), torch.tensor(sk, dtype=torch.float64), rtol=1e-5, atol=1e-6)
    # AP: 0 for the absent class, averaged in: as sklearn (one-vs-rest columns) and torchmetrics'
    # binned mode (torchmetrics' exact multiclass mode gives NaN and skips the class)
    ap = _quiet(F.multiclass_average_precision, preds, target, 4, thresholds=thresholds, average="none")
    assert ap[3].item() == 0.0
    macro = _quiet(F.multiclass_average_precision, preds, target, 4, thresholds=thresholds)
    if thresholds is None:
        onehot = torch.nn.functional.one_hot(target, 4).numpy()
        expected = _quiet(skm.average_precision_score, onehot, preds.double().numpy(), average="macro")
        torch.testing.assert_close(macro.double(), torch.tensor(expected, dtype=torch.float64), rtol=1e-5, atol=1e-6)
    else:
        torch.testing.assert_close(
            macro, _quiet(tmf.multiclass_average_precision, preds, target, 4, thresholds=thresholds)
        )


def test_all_tied_scores_give_half():
    preds, target = torch.full((10,), 0.3), torch.tensor([0, 1] * 5)
    assert F.binary_auroc(preds, target).item() == 0.5
    assert F.binary_average_precision(preds, target).item() == 0.5
    fpr, tpr, thr = F.binary_roc(preds, target)
    assert fpr.tolist() == [0.0, 1.0] and tpr.tolist() == [0.0, 1.0]


@pytest.mark.parametrize("thresholds", MODES)
def test_empty_epoch(thresholds):
    m = BinaryAUROC(thresholds=thresholds)
    with m.raising_if_never_updated(), pytest.raises(NotComputableError):  # ignite's rule
        m.compute()
    with warnings.catch_warnings(record=True) as caught:  # torchmetrics' rule: warn, compute the empty state
        warnings.simplefilter("always")
        if thresholds is None:
            with pytest.raises(ValueError, match="no sample to compute from"):
                m.compute()
        else:
            assert torch.isnan(m.compute())
    assert any("update" in str(w.message) for w in caught)  # the base's warning: compute before update
    m.update(torch.empty(0), torch.empty(0, dtype=torch.long))
    everything_ignored = BinaryAveragePrecision(thresholds=thresholds, ignore_index=-1)
    everything_ignored.update(torch.rand(4), torch.full((4,), -1))
    roc = BinaryROC(thresholds=thresholds).update(torch.empty(0), torch.empty(0, dtype=torch.long))
    if thresholds is None:  # exact mode: no score to make a threshold of (torchmetrics raises too)
        for metric in (m, everything_ignored, roc):
            with pytest.raises(ValueError, match="no sample to compute from"):
                metric.compute()
        return
    with pytest.warns(UserWarning):  # binned: the empty histogram's values, AUROC NaN (documented)
        assert torch.isnan(m.compute())
    with pytest.warns(UserWarning):
        assert everything_ignored.compute().item() == 0.0
    with pytest.warns(UserWarning):
        fpr, tpr, thr = roc.compute()
    assert fpr.numel() == tpr.numel() == thr.numel()


# -- bad input --------------------------------------------------------------------------------


def _bad_cases():
    # fixed labels: with random ones, `t + 1` below held no label 2 in one run of 256
    p, t = torch.rand(8), torch.tensor([0, 1, 1, 0, 1, 0, 0, 1])
    nan = p.clone()
    nan[5] = float("nan")
    cases = [
        (BinaryAUROC, {}, (nan, t), ValueError, r"preds: NaN at sample 5"),
        (BinaryAUROC, {"ignore_index": -1}, (nan, torch.where(torch.arange(8) == 5, -1, t)), ValueError, "preds: NaN"),
        (BinaryAUROC, {}, (p, t[:7]), ValueError, r"target: expected shape \[8\]"),
        (BinaryAUROC, {}, (t, t), TypeError, "preds: expected a floating tensor"),
        (
            BinaryAUROC,
            {},
            (p, t.float() / 2),
            ValueError,
            r"target: expected 0 or 1 \(a float target holds labels\), got 0.5",
        ),
        (BinaryAUROC, {}, (p, t.float() * 2), ValueError, r"target: label 2 at sample \d+ is out of range \[0, 2\)"),
        (
            MulticlassAUROC,
            {"num_classes": 3},
            (torch.rand(8, 3), t.float()),
            TypeError,
            "target: expected a tensor of integer class ids",
        ),
        (BinaryAUROC, {}, (p, t + 1), ValueError, r"target: label 2 at sample \d+ is out of range \[0, 2\)"),
        (BinaryAUROC, {}, (p.tolist(), t), TypeError, "preds: expected a tensor"),
        # (a fresh metric follows preds' device, so the mismatch that every metric refuses is target's)
        (BinaryAUROC, {}, (p, t.to("meta")), ValueError, "target: expected a tensor on cpu"),
        (MulticlassAUROC, {"num_classes": 3}, (torch.rand(8, 4), t), ValueError, r"preds: expected .*C = 3"),
        (MulticlassAUROC, {"num_classes": 3}, (torch.rand(8, 3), torch.full((8,), 3)), ValueError, "target: label 3"),
        (MulticlassAUROC, {"num_classes": 3}, (torch.rand(8), t), ValueError, "preds: expected"),
        (MulticlassAUROC, {"num_classes": 3}, (torch.rand(8, 3), t[:, None]), ValueError, "target: expected shape"),
        (MultilabelAUROC, {"num_labels": 2}, (torch.rand(8, 2), torch.full((8, 2), 3)), ValueError, "target: label 3"),
        (
            MultilabelAUROC,
            {"num_labels": 2},
            (torch.rand(8, 2), torch.ones(8, 3, dtype=torch.long)),
            ValueError,
            "target",
        ),
    ]
    return cases


@pytest.mark.parametrize("thresholds", MODES)
@pytest.mark.parametrize("case", range(len(_bad_cases())))
def test_bad_input_raises_and_leaves_state(case, thresholds):
    cls, kwargs, args, exc, match = _bad_cases()[case]
    metric = cls(thresholds=thresholds, **kwargs)
    good = (torch.rand(4), torch.tensor([0, 1, 1, 0]))
    if cls is MulticlassAUROC:
        good = (torch.rand(4, 3), torch.tensor([0, 1, 2, 0]))
    elif cls is MultilabelAUROC:
        good = (torch.rand(4, 2), torch.tensor([[0, 1], [1, 0], [1, 1], [0, 0]]))
    metric.update(*good)
    assert_rejects(metric, args, exc, match)
    assert_rejects(cls(thresholds=thresholds, **kwargs), args, exc, match)  # also on a fresh metric


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"thresholds": 1}, "thresholds: an int must be >= 2"),
        ({"thresholds": True}, "thresholds: expected None"),
        ({"thresholds": [0.5, 0.2]}, "non-decreasing"),
        ({"thresholds": [0.2, 1.5]}, r"numbers in \[0, 1\]"),
        ({"thresholds": []}, "non-empty"),
        ({"thresholds": torch.tensor([[0.1, 0.2]])}, "1-D floating tensor"),
        ({"thresholds": torch.tensor([0.1, float("nan")])}, "NaN"),
        ({"thresholds": "10"}, "thresholds: expected None"),
        ({"ignore_index": 1.5}, "ignore_index"),
        ({"max_fpr": 0.0}, "max_fpr"),
        ({"max_fpr": 1.5}, "max_fpr"),
    ],
)
def test_bad_options(kwargs, match):
    with pytest.raises((ValueError, TypeError), match=match):
        BinaryAUROC(**kwargs)


def test_bad_options_multiclass_multilabel():
    with pytest.raises(ValueError, match="num_classes: expected an int >= 2"):
        MulticlassAUROC(1)
    with pytest.raises(ValueError, match="average: expected one of"):
        MulticlassAUROC(3, average="micro")  # torchmetrics has no micro multiclass AUROC either
    with pytest.raises(ValueError, match="average: expected one of"):
        MultilabelAveragePrecision(3, average="samples")
    with pytest.raises(ValueError, match="average: expected one of"):
        MulticlassROC(3, average="weighted")
    with pytest.raises(ValueError, match="num_labels"):
        MultilabelROC(0)


# -- probabilities vs logits ------------------------------------------------------------------


@pytest.mark.parametrize("thresholds", MODES)
def test_probability_decision(thresholds):
    target = torch.tensor([0, 1, 0, 1, 1, 0])
    probs = torch.tensor([0.2, 0.9, 0.6, 0.55, 0.7, 0.1])
    # in [0, 1]: untouched (sigmoid would move every score into (0.5, 0.73))
    fpr, tpr, thr = F.binary_roc(probs, target, thresholds=thresholds)
    a, b = F.binary_roc(probs, target, thresholds=thresholds), tmf.binary_roc(probs, target, thresholds=thresholds)
    for x, y in zip(a, b):
        torch.testing.assert_close(x, y)
    # binary: an ignored sample outside [0, 1] does not make the batch logits (as torchmetrics)
    p = torch.cat([probs, torch.tensor([5.0])])
    t = torch.cat([target, torch.tensor([-1])])
    for x, y in zip(
        F.binary_roc(p, t, thresholds=thresholds, ignore_index=-1),
        tmf.binary_roc(p, t, thresholds=thresholds, ignore_index=-1),
    ):
        torch.testing.assert_close(x, y)
    # multilabel decides on every element, ignored ones included (as torchmetrics)
    pl = torch.stack([probs, probs.flip(0)], 1)
    pl[0, 0] = 5.0
    tl = torch.stack([target, target], 1)
    tl[0, 0] = -1
    for x, y in zip(
        F.multilabel_roc(pl, tl, 2, thresholds=thresholds, ignore_index=-1),
        tmf.multilabel_roc(pl, tl, 2, thresholds=thresholds, ignore_index=-1),
    ):
        for u, v in zip(x, y) if isinstance(x, list) else [(x, y)]:
            torch.testing.assert_close(u, v)
    # multiclass: softmax when any score is outside [0, 1]
    logits = torch.randn(6, 3) * 3
    tc = torch.tensor([0, 1, 2, 0, 1, 2])
    torch.testing.assert_close(
        F.multiclass_auroc(logits, tc, 3, average="none", thresholds=thresholds),
        F.multiclass_auroc(logits.softmax(1), tc, 3, average="none", thresholds=thresholds),
    )


def test_grad_and_half_inputs():
    preds = torch.rand(50, requires_grad=True)
    target = torch.randint(0, 2, (50,))
    for thresholds in MODES:
        BinaryAUROC(thresholds=thresholds).update(preds, target).compute()
        value = F.binary_auroc(preds.detach().half(), target, thresholds=thresholds)
        expected = tmf.binary_auroc(preds.detach().half(), target, thresholds=thresholds)
        torch.testing.assert_close(value, expected.float(), rtol=1e-3, atol=1e-3)


def test_exact_state_owns_its_memory():
    preds = torch.rand(10)
    target = torch.tensor([0, 1, 0, 0, 1, 1, 0, 1, 0, 1], dtype=torch.uint8)  # both classes: a finite AUROC
    m = BinaryAUROC().update(preds, target)
    before = m.compute().clone()
    preds.fill_(0.5)
    target.fill_(1)
    m.update(torch.rand(2), torch.tensor([0, 1]))  # drop the cache; the first rows must be intact
    assert m.scores[:10].ne(0.5).any() and m.labels[:10].ne(1).any()
    assert before.isfinite()


# -- state layout -----------------------------------------------------------------------------


def _state_bytes(metric):
    return sum(t.numel() * t.element_size() for t in states_of(metric).values())


@pytest.mark.parametrize(
    "factory, per_sample",
    [
        (lambda: BinaryAUROC(), 5),
        (lambda: MultilabelAUROC(7), 5 * 7),
        (lambda: MulticlassAUROC(10), 4 * 10 + 1),
        (lambda: MulticlassAUROC(300), 4 * 300 + 2),  # more than 256 classes: int16 class ids
    ],
)
def test_exact_bytes_per_sample(factory, per_sample):
    m = factory()
    n = 1000
    if isinstance(m, BinaryAUROC):
        args = (torch.rand(n), torch.randint(0, 2, (n,)))
    elif isinstance(m, MultilabelAUROC):
        args = (torch.rand(n, 7), torch.randint(0, 2, (n, 7)))
    else:
        c = m.num_classes
        args = (torch.rand(n, c), torch.randint(0, c, (n,)))
    assert _state_bytes(m.update(*args)) == per_sample * n
    assert m.scores.dtype == torch.float32 and m.labels.element_size() == (2 if per_sample == 1202 else 1)


def test_binned_state_does_not_grow():
    m = BinaryAUROC(thresholds=100)
    m.update(torch.rand(10), torch.randint(0, 2, (10,)))
    size = _state_bytes(m)
    m.update(torch.rand(10000), torch.randint(0, 2, (10000,)))
    assert _state_bytes(m) == size == 101 * 2 * 8


# -- state sharing in a MetricCollection ------------------------------------------------------


def _collection(thresholds, task="binary"):
    if task == "binary":
        metrics = {
            "auroc": BinaryAUROC(thresholds=thresholds),
            "ap": BinaryAveragePrecision(thresholds=thresholds),
            "roc": BinaryROC(thresholds=thresholds),
            "pr": BinaryPrecisionRecallCurve(thresholds=thresholds),
            "pauc": BinaryAUROC(thresholds=thresholds, max_fpr=0.5),
        }
    else:
        metrics = {
            "auroc": MulticlassAUROC(4, thresholds=thresholds),
            "ap": MulticlassAveragePrecision(4, thresholds=thresholds),
            "roc": MulticlassROC(4, thresholds=thresholds, average="micro"),
            "pr": MulticlassPrecisionRecallCurve(4, thresholds=thresholds),
        }
    return MetricCollection(metrics)


@pytest.mark.parametrize("thresholds", MODES)
@pytest.mark.parametrize("task", ["binary", "multiclass"])
def test_collection_shares_one_state(thresholds, task, monkeypatch):
    calls = []
    kernel = kernels.binned_update
    monkeypatch.setattr(kernels, "binned_update", lambda *a, **k: calls.append(1) or kernel(*a, **k))
    g = torch.Generator().manual_seed(1)
    shape = (60,) if task == "binary" else (60, 4)
    batches = [
        (torch.rand(shape, generator=g), torch.randint(0, 2 if task == "binary" else 4, (60,), generator=g))
        for _ in range(3)
    ]
    coll = _collection(thresholds, task)
    assert len(coll._owners) == 1  # one state for all
    for b in batches:
        coll.update(*b)
    assert len(calls) == (3 if thresholds else 0)  # one kernel call per batch, not one per metric
    if thresholds is None:
        assert coll["auroc"].scores.shape[0] == 180 and coll["roc"].scores is coll["auroc"].scores
    assert len(states_of(coll)) == (1 if thresholds else 2)
    alone = _collection(thresholds, task)
    alone._owners = list(alone.keys())  # not shared: every metric on its own
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        shared = coll.compute()
        for name, metric in alone.items():
            for b in batches:
                metric.update(*b)
            expected = metric.compute()
            for a, e in zip(
                np.atleast_1d(shared[name]) if isinstance(expected, torch.Tensor) else shared[name],
                np.atleast_1d(expected) if isinstance(expected, torch.Tensor) else expected,
            ):
                torch.testing.assert_close(a, e, equal_nan=True)


def test_different_thresholds_or_ignore_index_do_not_share():
    coll = MetricCollection(
        {
            "a": BinaryAUROC(thresholds=10),
            "b": BinaryAUROC(thresholds=20),
            "c": BinaryAUROC(thresholds=10, ignore_index=-1),
            "d": BinaryAUROC(),
            "e": BinaryROC(thresholds=torch.linspace(0, 1, 10)),
        }
    )
    assert coll._owners == ["a", "b", "c", "d"]  # "e": the same bin edges as "a"


@pytest.mark.parametrize("package", ["torchtally.classification", "torchtally.functional.classification"])
def test_docstring_examples(package):
    failed, attempted = package_doctests(package)
    assert attempted > 0 and failed == 0, f"{package}: {failed} of {attempted} examples failed"
