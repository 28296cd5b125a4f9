"""The torchmetrics surface of the classification count metrics: every class, task wrapper and
function has torchmetrics 1.9's name, parameter names, order, kinds and defaults, the same
class attributes, and the task wrappers return the task's class (or torchmetrics' errors)."""

import inspect

import pytest
import torch
import torchmetrics.classification as tmc
import torchmetrics.functional.classification as tmf

import torchtally
import torchtally as M
import torchtally.classification as ttc
import torchtally.functional.classification as ttf

FAMILIES = [
    "Accuracy",
    "Precision",
    "Recall",
    "F1Score",
    "FBetaScore",
    "Specificity",
    "StatScores",
    "HammingDistance",
    "ConfusionMatrix",
    "JaccardIndex",
    "MatthewsCorrCoef",
    "CohenKappa",
    "NegativePredictiveValue",
]
TASK_CLASSES = [
    f"{task}{family}"
    for family in FAMILIES
    for task in ("Binary", "Multiclass", "Multilabel")
    if hasattr(tmc, f"{task}{family}")
]
FUNCTIONS = [
    "accuracy",
    "precision",
    "recall",
    "f1_score",
    "fbeta_score",
    "specificity",
    "stat_scores",
    "hamming_distance",
    "confusion_matrix",
    "jaccard_index",
    "matthews_corrcoef",
    "cohen_kappa",
    "negative_predictive_value",
]
TASK_FUNCTIONS = [
    f"{task}_{name}"
    for name in FUNCTIONS
    for task in ("binary", "multiclass", "multilabel")
    if hasattr(tmf, f"{task}_{name}")
]


def _params(signature: inspect.Signature, skip_first: bool = False):
    """(name, kind, default) of every parameter: what a caller can rely on (annotations aside)."""
    params = list(signature.parameters.values())[1 if skip_first else 0 :]
    return [(p.name, p.kind, p.default) for p in params]


@pytest.mark.parametrize("name", TASK_CLASSES)
def test_task_class_signature(name):
    ours, theirs = getattr(ttc, name), getattr(tmc, name)
    assert _params(inspect.signature(ours.__init__)) == _params(inspect.signature(theirs.__init__))


@pytest.mark.parametrize("name", FAMILIES)
def test_task_wrapper_signature(name):
    ours, theirs = getattr(ttc, name), getattr(tmc, name)
    assert _params(inspect.signature(ours.__new__), skip_first=True) == _params(
        inspect.signature(theirs.__new__), skip_first=True
    )
    assert _params(inspect.signature(ours)) == _params(inspect.signature(theirs))


@pytest.mark.parametrize("name", TASK_FUNCTIONS + FUNCTIONS)
def test_function_signature(name):
    assert _params(inspect.signature(getattr(ttf, name))) == _params(inspect.signature(getattr(tmf, name)))


@pytest.mark.parametrize("name", TASK_CLASSES)
def test_class_attributes(name):
    ours, theirs = getattr(ttc, name), getattr(tmc, name)
    for attr in (
        "is_differentiable",
        "higher_is_better",
        "full_state_update",
        "plot_lower_bound",
        "plot_upper_bound",
        "plot_legend_name",
    ):
        assert getattr(ours, attr, None) == getattr(theirs, attr, None), attr


def test_every_name_is_exported_where_torchmetrics_has_it():
    for name in TASK_CLASSES + FAMILIES:
        assert name in ttc.__all__ and getattr(torchtally, name) is getattr(ttc, name)
    for name in TASK_FUNCTIONS + FUNCTIONS:
        assert name in ttf.__all__ and getattr(torchtally.functional, name) is getattr(ttf, name)


# -- the task wrappers -------------------------------------------------------------------------

WRAPPER_CASES = [
    (dict(task="binary"), "Binary"),
    (dict(task="BINARY", threshold=0.3), "Binary"),
    (dict(task="multiclass", num_classes=3), "Multiclass"),
    (dict(task="multilabel", num_labels=3), "Multilabel"),
]


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("kwargs, task", WRAPPER_CASES, ids=lambda v: str(v))
def test_task_wrapper_returns_the_task_class(family, kwargs, task):
    if family == "CohenKappa" and task == "Multilabel":
        for lib in (ttc, tmc):
            with pytest.raises(ValueError, match="Invalid"):
                getattr(lib, family)(**kwargs)
        return
    ours = getattr(ttc, family)(**kwargs)
    theirs = getattr(tmc, family)(**kwargs)
    assert type(ours) is getattr(ttc, task + family)
    assert type(theirs).__name__ == type(ours).__name__
    assert isinstance(ours, torchtally.Metric) and issubclass(getattr(ttc, family), torchtally.Metric)
    for attr in inspect.signature(type(theirs).__init__).parameters:  # the options torchmetrics keeps
        if attr not in ("self", "kwargs", "validate_args"):
            assert getattr(ours, attr) == getattr(theirs, attr), attr
    assert ours.validate_args == theirs.validate_args


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize(
    "kwargs",
    [
        dict(task="multiclass"),
        dict(task="multilabel"),
        dict(task="nope"),
        dict(task="multiclass", num_classes=3, top_k=None),
    ],
    ids=str,
)
def test_task_wrapper_errors(family, kwargs):
    theirs_raises = True
    try:
        getattr(tmc, family)(**kwargs)
        theirs_raises = False
    except ValueError:
        pass
    if theirs_raises:
        with pytest.raises(ValueError):
            getattr(ttc, family)(**kwargs)
    else:
        getattr(ttc, family)(**kwargs)


def test_task_wrapper_passes_options_through():
    m = ttc.FBetaScore("multiclass", beta=2.0, num_classes=4, average="weighted", top_k=2, zero_division=1)
    assert isinstance(m, M.MulticlassFBetaScore)
    assert (m.beta, m.num_classes, m.average, m.top_k, m.zero_division) == (2.0, 4, "weighted", 2, 1.0)
    m = ttc.Precision("multilabel", num_labels=3, threshold=0.2, zero_division=1, multidim_average="samplewise")
    assert (m.threshold, m.zero_division, m.multidim_average) == (0.2, 1.0, "samplewise")
    m = ttc.JaccardIndex("multiclass", num_classes=3, zero_division=1, ignore_index=0)
    assert (m.zero_division, m.ignore_index) == (1.0, 0)
    m = ttc.CohenKappa("binary", weights="quadratic")
    assert m.weights == "quadratic"


@pytest.mark.parametrize("name", FUNCTIONS)
def test_functional_task_forms_dispatch(name):
    g = torch.Generator().manual_seed(3)
    preds, target = torch.rand(40, 4, generator=g), torch.randint(0, 4, (40,), generator=g)
    ours = getattr(ttf, name)(preds, target, task="multiclass", num_classes=4)
    theirs = getattr(tmf, name)(preds, target, task="multiclass", num_classes=4)
    torch.testing.assert_close(ours, theirs, check_dtype=True, rtol=1e-6, atol=1e-6)
    for bad in (dict(task="multiclass"), dict(task="multilabel"), dict(task="invalid")):
        with pytest.raises(ValueError):
            getattr(ttf, name)(preds, target, **bad)
