"""The exact curves' shortcuts, bit for bit the general path's values: the one-column forms of
roc_rates and pr_curve (functional/curves/compute.py), and the ROC readouts (EER, sensitivity
at specificity and its mirror) that the C core reads off the sorted scores (readouts.py)."""

import warnings
from unittest import mock

import pytest
import torch

from torchtally import classification, kernels
from torchtally.functional.curves import compute, readouts
from torchtally.functional.curves.update import CurveTask
from torchtally.kernels import curves as curve_kernels


def _column(n: int, levels: int, positives: str, seed: int) -> compute.Counts:
    g = torch.Generator().manual_seed(seed)
    scores = (
        (torch.randint(0, levels, (n, 1), generator=g).float() / levels) if levels else torch.rand(n, 1, generator=g)
    )
    labels = torch.randint(0, 2, (n,), generator=g)
    if positives == "none":
        labels.zero_()
    elif positives == "all":
        labels.fill_(1)
    return compute.exact_counts(*curve_kernels.column_points(scores, labels.to(torch.uint8), 0, 0))


def _two_rows(c: compute.Counts) -> compute.Counts:
    """The same column twice: the general path (more than one row) computes it."""
    return compute.Counts(
        torch.cat([c.tp, c.tp]),
        torch.cat([c.fp, c.fp]),
        torch.cat([c.pos, c.pos]),
        torch.cat([c.neg, c.neg]),
        c.thresholds,
        True,
    )


def _same_bits(a: torch.Tensor, b: torch.Tensor) -> bool:
    return a.shape == b.shape and a.dtype == b.dtype and torch.equal(a.view(torch.int64), b.view(torch.int64))


@pytest.mark.parametrize("n", [0, 1, 9, 500])
@pytest.mark.parametrize("levels", [0, 3])
@pytest.mark.parametrize("positives", ["some", "none", "all"])
def test_one_column_rates_equal_the_general_path(n, levels, positives):
    c = _column(n, levels, positives, seed=n + levels)
    general = _two_rows(c)
    fpr, tpr, t = compute.roc_rates(c)
    gfpr, gtpr, gt = compute.roc_rates(general)
    assert _same_bits(fpr[0], gfpr[0]) and _same_bits(tpr[0], gtpr[0]) and torch.equal(t, gt)
    for if_zero in (float("nan"), 1.0):
        p, r, pt = compute.pr_curve(c, if_zero)
        gp, gr, gpt = compute.pr_curve(general, if_zero)
        assert _same_bits(p[0], gp[0]) and _same_bits(r[0], gr[0]) and torch.equal(pt, gpt)


def _states(task: str, n: int, levels: int, seed: int):
    g = torch.Generator().manual_seed(seed)
    k = 1 if task == "binary" else 4
    shape = (n,) if task == "binary" else (n, k)
    scores = (
        (torch.randint(0, levels, shape, generator=g).float() / levels) if levels else torch.rand(shape, generator=g)
    )
    if task == "multiclass":
        labels = torch.randint(0, k, (n,), generator=g).clamp(max=k - 2).to(torch.uint8)  # a class never seen
    elif task == "multilabel":
        labels = torch.randint(0, 3, shape, generator=g).to(torch.uint8)
        labels[:, 0] = labels[:, 0].clamp(max=0)  # a label without positives
    else:
        labels = torch.randint(0, 2, shape, generator=g).to(torch.uint8)
    return CurveTask(task, k, None, -1 if task == "multilabel" else None), {"scores": scores, "labels": labels}


READOUTS = [
    ("eer", lambda t, s: readouts.eer_from(t, s, None)),
    ("eer micro", lambda t, s: readouts.eer_from(t, s, "micro")),
    ("sensitivity", lambda t, s: readouts.sensitivity_at_specificity_from(t, s, 0.5)),
    ("sensitivity 0.9", lambda t, s: readouts.sensitivity_at_specificity_from(t, s, 0.9000000001)),
    ("specificity", lambda t, s: readouts.specificity_at_sensitivity_from(t, s, 0.5)),
    ("specificity 1", lambda t, s: readouts.specificity_at_sensitivity_from(t, s, 1.0)),
    ("recall", lambda t, s: readouts.recall_at_fixed_precision_from(t, s, 0.5)),
    ("recall 0", lambda t, s: readouts.recall_at_fixed_precision_from(t, s, 0.0)),
    ("recall 1", lambda t, s: readouts.recall_at_fixed_precision_from(t, s, 1.0)),
]


@pytest.mark.parametrize("task", ["binary", "multiclass", "multilabel"])
@pytest.mark.parametrize("levels", [0, 4])
@pytest.mark.parametrize("readout", READOUTS, ids=[r[0] for r in READOUTS])
def test_host_readouts_equal_the_curve_path(task, levels, readout):
    """The C core's EER, rate-at-rate and recall-at-precision readouts (readouts._exact_on_host) against the same
    readouts taken from roc_from's curve: values, thresholds and warnings alike."""
    name, fn = readout
    if task == "binary" and "micro" in name:
        pytest.skip("binary has no micro average")
    task_, states = _states(task, 300, levels, seed=levels + len(name))
    with warnings.catch_warnings(record=True) as fast_warnings:
        warnings.simplefilter("always")
        fast = fn(task_, states)
    with mock.patch.object(readouts, "_exact_on_host", lambda t, s: False):
        with warnings.catch_warnings(record=True) as slow_warnings:
            warnings.simplefilter("always")
            slow = fn(task_, states)
    for a, b in zip(fast if isinstance(fast, tuple) else (fast,), slow if isinstance(slow, tuple) else (slow,)):
        assert a.dtype == b.dtype and a.shape == b.shape and torch.equal(a.view(torch.int32), b.view(torch.int32))
    assert [str(w.message) for w in fast_warnings] == [str(w.message) for w in slow_warnings]


CLASSES = [
    ("BinaryAUROC", {}),
    ("MulticlassAveragePrecision", {"num_classes": 4}),
    ("MultilabelROC", {"num_labels": 4}),
    ("MulticlassPrecisionRecallCurve", {"num_classes": 4}),
    ("MultilabelEER", {"num_labels": 4}),
    ("MulticlassSensitivityAtSpecificity", {"num_classes": 4, "min_specificity": 0.5}),
    ("BinarySpecificityAtSensitivity", {"min_sensitivity": 0.5}),
    ("MulticlassRecallAtFixedPrecision", {"num_classes": 4, "min_precision": 0.5}),
    ("MultilabelLogAUC", {"num_labels": 4}),
]


def _epoch(name: str, kwargs: dict, backend: str):
    previous = kernels.set_backend(backend)
    try:
        g = torch.Generator().manual_seed(11)
        metric = getattr(classification, name)(**kwargs)
        for n in (30, 70):
            if name.startswith("Binary"):
                batch = (torch.randint(0, 9, (n,), generator=g) / 8, torch.randint(0, 2, (n,), generator=g))
            elif name.startswith("Multiclass"):
                batch = (torch.rand(n, 4, generator=g).softmax(-1), torch.randint(0, 3, (n,), generator=g))
            else:
                batch = (torch.randint(0, 9, (n, 4), generator=g) / 8, torch.randint(0, 2, (n, 4), generator=g))
            metric.update(*batch)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return metric.compute()
    finally:
        kernels.set_backend(previous)


def _flat(value):
    if isinstance(value, torch.Tensor):
        return [value]
    return [t for v in value for t in _flat(v)]


@pytest.mark.parametrize("name, kwargs", CLASSES, ids=[c[0] for c in CLASSES])
def test_the_c_core_and_the_torch_reference_give_one_value(name, kwargs):
    """What a device without the C core computes (the torch reference of the exact curve
    kernels, as on CUDA) equals the C core's values: curves and readouts bit for bit, AUROC and
    average precision up to the order of their float64 sums."""
    ours, theirs = _flat(_epoch(name, kwargs, "c")), _flat(_epoch(name, kwargs, "reference"))
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        if "AUROC" in name or "AveragePrecision" in name:
            torch.testing.assert_close(a, b, rtol=1e-6, atol=1e-7, equal_nan=True)
        else:
            assert a.dtype == b.dtype and torch.equal(a.view(torch.int32), b.view(torch.int32))
