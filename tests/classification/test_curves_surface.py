"""The torchmetrics surface of the curve metrics: signatures, class attributes, task wrappers,
module paths, accepted targets and compute() on an empty state."""

import inspect
import warnings

import pytest
import torch
import torchmetrics.classification as tmc
import torchmetrics.functional.classification as tmf

import torchtally
import torchtally.classification as ttc
import torchtally.functional as ttf

FAMILIES = ("AUROC", "AveragePrecision", "ROC", "PrecisionRecallCurve")
CLASSES = [f"{task}{family}" for family in FAMILIES for task in ("Binary", "Multiclass", "Multilabel")]
WRAPPERS = list(FAMILIES)
FUNCTIONS = [
    f"{task}{name}"
    for name in ("auroc", "average_precision", "roc", "precision_recall_curve")
    for task in ("binary_", "multiclass_", "multilabel_", "")
]


def _parameters(fn):
    """(name, kind, default) of every parameter but self/cls: what a caller can rely on."""
    params = list(inspect.signature(fn).parameters.values())
    if params and params[0].name in ("self", "cls"):
        params = params[1:]
    return [(p.name, p.kind, p.default) for p in params]


def _same_defaults(ours, theirs):
    assert [(n, k) for n, k, _ in ours] == [(n, k) for n, k, _ in theirs]
    for (name, _, a), (_, _, b) in zip(ours, theirs):
        assert type(a) is type(b) and a == b, f"default of {name}: {a!r} != {b!r}"


@pytest.mark.parametrize("name", CLASSES)
def test_class_signature_matches_torchmetrics(name):
    _same_defaults(_parameters(getattr(ttc, name).__init__), _parameters(getattr(tmc, name).__init__))


@pytest.mark.parametrize("name", WRAPPERS)
def test_wrapper_signature_matches_torchmetrics(name):
    _same_defaults(_parameters(getattr(ttc, name).__new__), _parameters(getattr(tmc, name).__new__))


@pytest.mark.parametrize("name", FUNCTIONS)
def test_function_signature_matches_torchmetrics(name):
    _same_defaults(_parameters(getattr(ttf, name)), _parameters(getattr(tmf, name)))


@pytest.mark.parametrize("name", CLASSES)
def test_class_attributes_match_torchmetrics(name):
    ours, theirs = getattr(ttc, name), getattr(tmc, name)
    for attr in ("is_differentiable", "higher_is_better", "full_state_update"):
        assert getattr(ours, attr) == getattr(theirs, attr), attr


def test_names_are_exported_where_torchmetrics_has_them():
    # (each at torchmetrics' file too: tests/test_torchmetrics_tree.py)
    for name in CLASSES + WRAPPERS:
        assert name in ttc.__all__
        assert getattr(ttc, name) is getattr(torchtally, name)
    for name in FUNCTIONS:
        assert hasattr(ttf, name)
        assert hasattr(tmf, name)  # the names are torchmetrics' own


@pytest.mark.parametrize("family", FAMILIES)
def test_wrapper_returns_the_task_metric(family):
    wrapper = getattr(ttc, family)
    assert issubclass(wrapper, torchtally.Metric)
    binary = wrapper(task="binary", thresholds=5, ignore_index=-1)
    assert type(binary) is getattr(ttc, "Binary" + family)
    assert binary.ignore_index == -1 and torch.equal(binary.thresholds, torch.linspace(0, 1, 5))
    multiclass = wrapper(task="MultiClass", num_classes=3)  # any case, as torchmetrics
    assert type(multiclass) is getattr(ttc, "Multiclass" + family) and multiclass.num_classes == 3
    multilabel = wrapper(task="multilabel", num_labels=4, validate_args=False)
    assert type(multilabel) is getattr(ttc, "Multilabel" + family) and multilabel.num_labels == 4
    assert multilabel.validate_args is False
    with pytest.raises(ValueError, match="Invalid task"):
        wrapper(task="not_valid_task")
    with pytest.raises(ValueError, match="num_classes"):
        wrapper(task="multiclass")
    with pytest.raises(ValueError, match="num_labels"):
        wrapper(task="multilabel", num_labels=None)
    with pytest.raises(ValueError, match="not_an_option"):  # unknown keywords are refused, as torchmetrics
        wrapper(task="binary", not_an_option=1)


def test_wrapper_options_reach_the_metric():
    assert ttc.AUROC(task="binary", max_fpr=0.3).max_fpr == 0.3
    assert ttc.AUROC(task="multiclass", num_classes=3, average="weighted").average == "weighted"
    assert ttc.AveragePrecision(task="multilabel", num_labels=3, average="micro").average == "micro"
    assert ttc.ROC(task="multiclass", num_classes=3, average="macro").average == "macro"  # via **kwargs


def test_functional_task_forms_raise_like_torchmetrics():
    preds, target = torch.rand(6), torch.tensor([0, 1, 0, 1, 1, 0])
    with pytest.raises(ValueError, match="Invalid task"):
        ttf.auroc(preds, target, task="binaryy")
    with pytest.raises(ValueError, match="num_classes"):
        ttf.roc(preds, target, task="multiclass")
    with pytest.raises(ValueError, match="num_labels"):
        ttf.average_precision(preds, target, task="multilabel", num_labels=2.0)


@pytest.mark.parametrize("thresholds", [None, 7])
def test_float_targets_holding_labels(thresholds):
    """torchmetrics' BinaryAUROC takes float 0/1 targets; every binary/multilabel curve does here."""
    g = torch.Generator().manual_seed(0)
    preds, target = torch.rand(40, generator=g), torch.randint(0, 2, (40,), generator=g)
    expected = tmf.binary_auroc(preds, target, thresholds=thresholds)
    for dtype in (torch.float16, torch.bfloat16, torch.float32, torch.float64):
        got = ttc.BinaryAUROC(thresholds=thresholds).update(preds, target.to(dtype)).compute()
        torch.testing.assert_close(got, expected)
    m = ttc.BinaryAveragePrecision(thresholds=thresholds, ignore_index=-1)
    masked = torch.where(torch.arange(40) % 5 == 0, -1, target)
    torch.testing.assert_close(
        m.update(preds, masked.float()).compute(),
        tmf.binary_average_precision(preds, masked, thresholds=thresholds, ignore_index=-1),
    )
    ml_preds, ml_target = torch.rand(30, 3, generator=g), torch.randint(0, 2, (30, 3), generator=g)
    torch.testing.assert_close(
        ttf.multilabel_auroc(ml_preds, ml_target.double(), 3, thresholds=thresholds),
        tmf.multilabel_auroc(ml_preds, ml_target, 3, thresholds=thresholds),
    )
    for bad, match in (
        (torch.full((40,), 0.5), "expected 0 or 1"),
        (torch.full((40,), float("nan")), "expected 0 or 1"),
        (torch.full((40,), 2.0), "out of range"),
    ):
        metric = ttc.BinaryROC(thresholds=thresholds)
        with pytest.raises(ValueError, match=match):
            metric.update(preds, bad)
    with pytest.raises(TypeError, match="integer class ids"):
        ttc.MulticlassAUROC(3, thresholds=thresholds).update(torch.rand(4, 3), torch.tensor([0.0, 1.0, 2.0, 0.0]))


@pytest.mark.parametrize("thresholds", [None, 5])
def test_binary_normalization_option(thresholds):
    logits = torch.tensor([-2.0, 0.5, 3.0, -0.5])
    target = torch.tensor([0, 1, 1, 0])
    as_given = ttc.BinaryROC(thresholds=thresholds, normalization=None).update(logits, target).compute()
    expected = tmf.binary_roc(logits, target, thresholds=thresholds) if thresholds is None else None
    if expected is not None:  # exact mode on raw scores: thresholds are the raw scores
        assert as_given[2].tolist()[1:] == sorted(logits.tolist(), reverse=True)
    with pytest.raises(ValueError, match="normalization='softmax'"):
        ttc.BinaryPrecisionRecallCurve(thresholds=thresholds, normalization="softmax").update(logits, target)
    probs = torch.tensor([0.1, 0.6, 0.9, 0.3])
    ours = (
        ttc.BinaryPrecisionRecallCurve(thresholds=thresholds, normalization="softmax").update(probs, target).compute()
    )
    for a, b in zip(
        ours, tmc.BinaryPrecisionRecallCurve(thresholds=thresholds, normalization="softmax")(probs, target)
    ):
        torch.testing.assert_close(a, b, equal_nan=True)
    with pytest.raises(ValueError, match="normalization"):
        ttc.BinaryAveragePrecision(normalization="tanh")
    # metrics that read the scores differently do not share one state in a collection
    assert ttc.BinaryROC(normalization=None).state_key != ttc.BinaryROC().state_key


def _empty_compute(metric):
    """compute() before any update: the base warns, then computes over the reset state."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return metric.compute()


@pytest.mark.parametrize("name", CLASSES)
def test_compute_on_the_empty_state_is_torchmetrics(name):
    """Binned: torchmetrics' values of an empty histogram (AUROC NaN, the documented policy).
    Exact: torchmetrics raises; so does torchtally, with a ValueError that says why."""
    args = () if name.startswith("Binary") else (3,)
    with pytest.raises(ValueError, match="no sample to compute from"):
        _empty_compute(getattr(ttc, name)(*args))
    ours = _empty_compute(getattr(ttc, name)(*args, thresholds=4))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = getattr(tmc, name)(*args, thresholds=4).compute()
    if "AUROC" in name:
        assert torch.isnan(ours) and theirs.item() == 0.0
        return
    ours, theirs = (
        (ours,) if isinstance(ours, torch.Tensor) else ours,
        (theirs,) if isinstance(theirs, torch.Tensor) else theirs,
    )
    for a, b in zip(ours, theirs):
        assert a.dtype == b.dtype and a.shape == b.shape
        torch.testing.assert_close(a.abs() if a.dim() == 0 else a, b.abs() if b.dim() == 0 else b, equal_nan=True)
