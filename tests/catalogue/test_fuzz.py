"""Property-based tests of the public metric API, with hypothesis.

Each example feeds one metric (or a MetricCollection of a family's metrics) a few batches
drawn by support.fuzz_batches: random sizes (empty ones too), dtypes, memory layouts
(transposed, strided, offset, expanded views), logits with +-inf, ignore_index, and one fault
at a time (NaN, inf, an out-of-range or non-0/1 label, a shape mismatch, an unsupported dtype,
a meta tensor, a list). Properties:

* a faulty batch raises TypeError or ValueError naming the argument at fault, and every state
  is exactly as it was (also in a collection);
* after the valid batches, compute() equals scikit-learn (numpy for aggregation) on the
  concatenation of those batches, read as the metric documents (probabilities or logits per
  batch, ignore_index dropped, scores kept as float32 in exact curves).

Bounded for CI: ``derandomize=True`` (the same examples on every run), ``deadline=None`` and
a fixed ``max_examples`` per test, so the whole file runs in well under a minute.
"""

import dataclasses
import math
import warnings

import numpy as np
import pytest
import sklearn.metrics as skm
import torch
from hypothesis import HealthCheck, given, settings  # one of the test extras (pip install -e ".[test]")
from hypothesis import strategies as st
from support.fuzz_batches import IGNORE, aggregation_batch, classification_batch, regression_batch
from support.metric_tester import states_of
from support.state_checks import assert_same_states

import torchtally as M
from torchtally import MetricCollection

FUZZ = settings(
    max_examples=150,
    deadline=None,
    derandomize=True,
    database=None,
    print_blob=False,
    suppress_health_check=list(HealthCheck),
)
NUM = 3


def feed(metric, batches):
    """Update with every batch; a faulty one must be refused naming its argument, states kept.
    Returns the valid batches' arguments."""
    valid = []
    for batch in batches:
        before = states_of(metric.metric if isinstance(metric, Single) else metric)
        if batch.fault is None:
            metric.update(*batch.args)
            valid.append(batch.args)
            continue
        with pytest.raises((TypeError, ValueError)) as info:
            metric.update(*batch.args)
        assert batch.blamed in str(info.value), f"{batch.fault}: the error does not name {batch.blamed}: {info.value}"
        assert_same_states(
            before,
            states_of(metric.metric if isinstance(metric, Single) else metric),
            f"after a refused batch ({batch.fault})",
        )
    return valid


class Single:
    """One metric of a family, fed and computed like a collection of one (but not wrapped in one)."""

    def __init__(self, name, metric):
        self.name, self.metric = name, metric

    def update(self, *args):
        self.metric.update(*args)

    def keys(self):
        return [self.name]

    def __getitem__(self, name):
        return self.metric


def computed(metric):
    """compute() of each metric, by name."""
    if isinstance(metric, Single):
        return {metric.name: metric.metric.compute()}
    return dict(metric.compute())


def close(got, want, rtol=1e-5, atol=1e-6):
    got = got.double().numpy() if isinstance(got, torch.Tensor) else np.asarray(got, dtype=np.float64)
    np.testing.assert_allclose(got, np.asarray(want, dtype=np.float64), rtol=rtol, atol=atol, equal_nan=True)


def either(draw, make):
    """A drawn single metric of the family, or all of them in one MetricCollection."""
    if draw(st.booleans()):
        return MetricCollection(make())
    name = draw(st.sampled_from(sorted(make())))
    return Single(name, make()[name])


# -- classification counts ---------------------------------------------------------------------


def _as_predictions(preds, threshold=0.5):
    """torchmetrics' rule per batch: float preds are logits when any value lies outside [0, 1]."""
    p = preds.double()
    if not preds.is_floating_point():
        return p.long()
    logits = bool(((p < 0) | (p > 1)).any())
    return (p > (math.log(threshold / (1 - threshold)) if logits else threshold)).long()


def _kept_pairs(valid, task):
    """Concatenated (target, prediction) of the counted samples, flattened per column."""
    targets, predictions = [], []
    for preds, target in valid:
        t = target.long() if not target.is_floating_point() else target.double().long()
        if task == "multiclass":
            p = preds.double().argmax(1) if preds.dim() == t.dim() + 1 else preds.long()
            p, t = p.reshape(-1), t.reshape(-1)
        else:
            p = _as_predictions(preds)
            p, t = (p.reshape(-1), t.reshape(-1)) if task == "binary" else (p, t)
        targets.append(t)
        predictions.append(p)
    width = () if task != "multilabel" else (NUM,)
    return (
        torch.cat(targets) if targets else torch.zeros((0,) + width, dtype=torch.long),
        torch.cat(predictions) if predictions else torch.zeros((0,) + width, dtype=torch.long),
    )


def _binary_metrics(ignore_index):
    kw = dict(ignore_index=ignore_index)
    return {
        "confmat": M.BinaryConfusionMatrix(**kw),
        "accuracy": M.BinaryAccuracy(**kw),
        "precision": M.BinaryPrecision(**kw),
        "recall": M.BinaryRecall(**kw),
        "f1": M.BinaryF1Score(**kw),
        "specificity": M.BinarySpecificity(**kw),
        "jaccard": M.BinaryJaccardIndex(**kw),
        "mcc": M.BinaryMatthewsCorrCoef(**kw),
        "kappa": M.BinaryCohenKappa(**kw),
    }


@FUZZ
@given(st.data())
def test_binary_classification(data):
    ignore_index = data.draw(st.sampled_from([None, IGNORE]))
    metric = either(data.draw, lambda: _binary_metrics(ignore_index))
    batches = data.draw(st.lists(classification_batch("binary", 2, ignore_index), min_size=1, max_size=4))
    valid = feed(metric, batches)
    t, p = _kept_pairs(valid, "binary")
    keep = t != IGNORE if ignore_index is not None else torch.ones_like(t, dtype=torch.bool)
    t, p = t[keep].numpy(), p[keep].numpy()
    if not valid or t.size == 0:
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = computed(metric)
    cm = skm.confusion_matrix(t, p, labels=[0, 1])
    nondegenerate = (cm.sum(0) > 0).all() and (cm.sum(1) > 0).all()
    refs = {
        "confmat": lambda: cm,
        "accuracy": lambda: skm.accuracy_score(t, p),
        "precision": lambda: skm.precision_score(t, p, zero_division=0),
        "recall": lambda: skm.recall_score(t, p, zero_division=0),
        "f1": lambda: skm.f1_score(t, p, zero_division=0),
        "specificity": lambda: skm.recall_score(t, p, pos_label=0, zero_division=0),
        "jaccard": lambda: skm.jaccard_score(t, p, zero_division=0),
        "mcc": lambda: skm.matthews_corrcoef(t, p),
        "kappa": lambda: skm.cohen_kappa_score(t, p),
    }
    for name, value in got.items():
        if name in ("mcc", "kappa") and not nondegenerate:
            continue  # conventions for an empty row or column differ; the counts are checked above
        close(value, refs[name](), rtol=1e-6)


def _multiclass_metrics(ignore_index):
    kw = dict(num_classes=NUM, ignore_index=ignore_index)
    return {
        "confmat": M.MulticlassConfusionMatrix(**kw),
        "accuracy": M.MulticlassAccuracy(average="micro", **kw),
        "precision": M.MulticlassPrecision(average=None, **kw),
        "recall": M.MulticlassRecall(average=None, **kw),
        "f1": M.MulticlassF1Score(average="micro", **kw),
    }


@FUZZ
@given(st.data())
def test_multiclass_classification(data):
    ignore_index = data.draw(st.sampled_from([None, IGNORE]))
    metric = either(data.draw, lambda: _multiclass_metrics(ignore_index))
    batches = data.draw(st.lists(classification_batch("multiclass", NUM, ignore_index), min_size=1, max_size=4))
    valid = feed(metric, batches)
    t, p = _kept_pairs(valid, "multiclass")
    keep = t != IGNORE if ignore_index is not None else torch.ones_like(t, dtype=torch.bool)
    t, p = t[keep].numpy(), p[keep].numpy()
    if not valid or t.size == 0:
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = computed(metric)
    labels = list(range(NUM))
    refs = {
        "confmat": lambda: skm.confusion_matrix(t, p, labels=labels),
        "accuracy": lambda: skm.accuracy_score(t, p),
        "precision": lambda: skm.precision_score(t, p, labels=labels, average=None, zero_division=0),
        "recall": lambda: skm.recall_score(t, p, labels=labels, average=None, zero_division=0),
        "f1": lambda: skm.f1_score(t, p, labels=labels, average="micro", zero_division=0),
    }
    for name, value in got.items():
        close(value, refs[name](), rtol=1e-6)


@FUZZ
@given(st.data())
def test_multilabel_classification(data):
    ignore_index = data.draw(st.sampled_from([None, IGNORE]))
    kw = dict(num_labels=NUM, ignore_index=ignore_index)
    metric = either(
        data.draw,
        lambda: {
            "confmat": M.MultilabelConfusionMatrix(**kw),
            "accuracy": M.MultilabelAccuracy(average="micro", **kw),
            "f1": M.MultilabelF1Score(average="micro", **kw),
        },
    )
    batches = data.draw(st.lists(classification_batch("multilabel", NUM, ignore_index), min_size=1, max_size=4))
    valid = feed(metric, batches)
    if not valid:
        return
    t, p = _kept_pairs(valid, "multilabel")
    keep = t != IGNORE
    cms = np.stack(
        [
            skm.confusion_matrix(t[keep[:, j], j].numpy(), p[keep[:, j], j].numpy(), labels=[0, 1])
            if keep[:, j].any()
            else np.zeros((2, 2), dtype=np.int64)
            for j in range(NUM)
        ]
    )
    tn, fp, fn, tp = (cms[:, 0, 0].sum(), cms[:, 0, 1].sum(), cms[:, 1, 0].sum(), cms[:, 1, 1].sum())
    if tn + fp + fn + tp == 0:
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = computed(metric)
    refs = {
        "confmat": cms,
        "accuracy": (tp + tn) / (tn + fp + fn + tp),
        "f1": 2 * tp / (2 * tp + fp + fn) if tp + fp + fn else 0.0,
    }
    for name, value in got.items():
        close(value, refs[name], rtol=1e-6)


# -- exact curves --------------------------------------------------------------------------------


def _curve_rows(valid, task, ignore_index):
    """(scores as float32, labels) as exact mode keeps them: per batch, probabilities when every
    counted score lies in [0, 1], else sigmoid (softmax over classes), then ignored rows dropped."""
    scores, labels = [], []
    for preds, target in valid:
        t = target.long() if not target.is_floating_point() else target.double().long()
        if task == "binary" and preds.dim() != 1:
            preds, t = preds.reshape(-1), t.reshape(-1)
        keep = None if ignore_index is None or task == "multilabel" else t != ignore_index
        decided = preds if keep is None else preds[keep]
        if decided.numel() and not bool(((decided >= 0) & (decided <= 1)).all()):
            preds = preds.softmax(dim=1) if task == "multiclass" else preds.sigmoid()
        if keep is not None:
            preds, t = preds[keep], t[keep]
        scores.append(preds.to(torch.float32).double())
        labels.append(t)
    return torch.cat(scores).numpy(), torch.cat(labels).numpy()


def _softmax_undefined(batch, ignore_index):
    """A valid multiclass batch read as logits whose softmax has no value (a +inf logit) is a
    fault: the metric must refuse it, naming preds."""
    if batch.fault is not None:
        return batch
    preds, target = batch.args
    keep = target != ignore_index if ignore_index is not None else torch.ones(target.shape, dtype=torch.bool)
    kept = preds[keep]
    logits = kept.numel() and not bool(((kept >= 0) & (kept <= 1)).all())
    if logits and bool(torch.isposinf(preds).any()):
        return dataclasses.replace(batch, fault="+inf logit", blamed="preds")
    return batch


def _auroc(labels, scores):
    return skm.roc_auc_score(labels, scores) if 0 < labels.sum() < labels.size else float("nan")


def _average_precision(labels, scores):
    return skm.average_precision_score(labels, scores) if labels.sum() > 0 else 0.0


@FUZZ
@given(st.data())
def test_exact_curves(data):
    task = data.draw(st.sampled_from(["binary", "multiclass", "multilabel"]))
    ignore_index = data.draw(st.sampled_from([None, IGNORE]))
    if task == "binary":
        make = lambda: {
            "auroc": M.BinaryAUROC(ignore_index=ignore_index),  # noqa: E731
            "ap": M.BinaryAveragePrecision(ignore_index=ignore_index),
        }
    elif task == "multiclass":
        make = lambda: {
            "auroc": M.MulticlassAUROC(NUM, average=None, ignore_index=ignore_index),  # noqa: E731
            "ap": M.MulticlassAveragePrecision(NUM, average=None, ignore_index=ignore_index),
        }
    else:
        make = lambda: {
            "auroc": M.MultilabelAUROC(NUM, average=None, ignore_index=ignore_index),  # noqa: E731
            "ap": M.MultilabelAveragePrecision(NUM, average=None, ignore_index=ignore_index),
        }
    metric = either(data.draw, make)
    batch = classification_batch(task, 2 if task == "binary" else NUM, ignore_index, scores_only=True)
    if task == "multiclass":
        batch = batch.map(lambda b: _softmax_undefined(b, ignore_index))
    batches = data.draw(st.lists(batch, min_size=1, max_size=4))
    valid = feed(metric, batches)
    if not valid or not sum(args[1].numel() for args in valid):
        return
    scores, labels = _curve_rows(valid, task, ignore_index)
    if labels.shape[0] == 0:
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = computed(metric)
    if task == "binary":
        want = {"auroc": _auroc(labels, scores), "ap": _average_precision(labels, scores)}
    else:
        columns = []
        for k in range(NUM):
            y = (labels == k) if task == "multiclass" else labels[:, k]
            s = scores[:, k]
            if task == "multilabel" and ignore_index is not None:
                s, y = s[y != ignore_index], y[y != ignore_index]
            columns.append((y.astype(np.int64), s))
        want = {"auroc": [_auroc(y, s) for y, s in columns], "ap": [_average_precision(y, s) for y, s in columns]}
    for name, value in got.items():
        close(value, want[name], rtol=1e-6)


# -- regression ----------------------------------------------------------------------------------


def _regression_metrics():
    return {
        "mse": M.MeanSquaredError(),
        "mae": M.MeanAbsoluteError(),
        "r2": M.R2Score(),
        "ev": M.ExplainedVariance(),
        "pearson": M.PearsonCorrCoef(),
    }


@FUZZ
@given(st.data())
def test_regression(data):
    metric = either(data.draw, _regression_metrics)
    batches = data.draw(st.lists(regression_batch(None), min_size=1, max_size=4))
    valid = feed(metric, batches)
    if not valid:
        return
    p = torch.cat([a[0].double() for a in valid]).numpy()
    t = torch.cat([a[1].double() for a in valid]).numpy()
    n = p.size
    if "r2" in metric.keys() and n < 2:
        with pytest.raises(ValueError, match="at least 2 samples"):
            metric["r2"].compute()
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = computed(metric)
        nan = float("nan")
        want = {
            "mse": skm.mean_squared_error(t, p) if n else nan,
            "mae": skm.mean_absolute_error(t, p) if n else nan,
            "r2": skm.r2_score(t, p) if n >= 2 else nan,
            "ev": skm.explained_variance_score(t, p) if n else nan,
            "pearson": np.corrcoef(p, t)[0, 1] if n >= 2 and p.std() and t.std() else nan,
        }
    for name, value in got.items():
        close(value, want[name])


@FUZZ
@given(st.data(), st.sampled_from(["sum", "mean", "none"]))
def test_cosine_similarity(data, reduction):
    metric = M.CosineSimilarity(reduction=reduction)
    valid = feed(metric, data.draw(st.lists(regression_batch(2), min_size=1, max_size=4)))
    rows = sum(a[0].shape[0] for a in valid)
    if rows == 0:
        if valid:
            with pytest.raises(ValueError, match="no rows"):
                metric.compute()
        return
    p = torch.cat([a[0].double() for a in valid]).numpy()
    t = torch.cat([a[1].double() for a in valid]).numpy()
    with np.errstate(invalid="ignore", divide="ignore"):
        sims = (p * t).sum(1) / (np.linalg.norm(p, axis=1) * np.linalg.norm(t, axis=1))
    want = {"sum": sims.sum(), "mean": sims.mean(), "none": sims}[reduction]
    close(metric.compute(), want)


# -- aggregation ---------------------------------------------------------------------------------


@FUZZ
@given(st.data(), st.sampled_from(["sum", "mean", "max", "min", "cat"]), st.sampled_from(["error", "ignore"]))
def test_aggregation(data, kind, nan_strategy):
    make = {"sum": M.SumMetric, "mean": M.MeanMetric, "max": M.MaxMetric, "min": M.MinMetric, "cat": M.CatMetric}[kind]
    metric = make(nan_strategy=nan_strategy)
    batch = aggregation_batch(weighted=kind == "mean", nan_ok=nan_strategy == "ignore", one_dim=kind == "cat")
    valid = feed(metric, data.draw(st.lists(batch, min_size=1, max_size=4)))
    if not valid:
        return
    values = np.concatenate([a[0].double().reshape(-1).numpy() for a in valid])
    weights = (
        np.concatenate([torch.broadcast_to(a[1], a[0].shape).double().reshape(-1).numpy() for a in valid])
        if kind == "mean"
        else np.ones_like(values)
    )
    kept = ~np.isnan(values)
    values, weights = values[kept], weights[kept]
    with np.errstate(invalid="ignore", divide="ignore"):
        want = {
            "sum": values.sum(),
            "mean": (values * weights).sum() / weights.sum(),
            "max": values.max(initial=-np.inf),
            "min": values.min(initial=np.inf),
            "cat": values,
        }[kind]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        close(metric.compute(), want, rtol=1e-6)
