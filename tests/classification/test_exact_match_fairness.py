"""NegativePredictiveValue, ExactMatch and the group-fairness metrics (BinaryGroupStatRates,
BinaryFairness) against torchmetrics 1.9 and scikit-learn.

* every class through check_metric (reference: torchmetrics' functional form on the concatenated
  batches, or scikit-learn), over multidim_average, ignore_index, top_k, logits; the same cases
  on 3 gloo ranks in ONE run; forward/compute parity with torchmetrics' classes;
* functional forms and task wrappers against torchmetrics; bad input (state unchanged);
* NPV shares the confusion matrix of Precision/Accuracy in a MetricCollection (one state);
* the deliberate differences: NPV classes use ``zero_division``; fairness counts each sample for
  its own group id; multilabel samplewise exact match divides each sample by its own positions.
"""

import functools
import inspect
import warnings
import zlib

import pytest
import sklearn.metrics as skm
import torch
import torchmetrics.classification as tmc
import torchmetrics.functional.classification as tmf
from support.metric_tester import (
    CollectionFactory,
    MetricCase,
    assert_rejects,
    assert_same,
    check_metric,
    run_distributed_cases,
    states_of,
)
from support.parity_tester import ParityCase, check_parity

import torchtally
import torchtally.classification as ttc
import torchtally.functional.classification as ttf
from torchtally import MetricCollection, kernels

pytestmark = pytest.mark.filterwarnings("ignore:.*(does not require a target|have no counted samples)")

N, C, L, M = 16, 4, 3, 3
BATCHES = 4


def _gen(*key) -> torch.Generator:
    return torch.Generator().manual_seed(zlib.crc32(repr(key).encode()))  # the same data in every process


def _with_ignored(target, ignore_index, g):
    if ignore_index is None:
        return target
    return torch.where(torch.rand(target.shape, generator=g) < 0.2, ignore_index, target)


def binary_batches(extra=(), ignore_index=None, kind="probs"):
    g = _gen("binary", extra, ignore_index, kind)
    out = []
    for _ in range(BATCHES):
        target = torch.randint(0, 2, (N, *extra), generator=g)
        logits = torch.randn(target.shape, generator=g) + (target - 0.5)
        preds = {"probs": logits.sigmoid(), "labels": (logits > 0).long(), "logits": logits * 4}[kind]
        out.append((preds, _with_ignored(target, ignore_index, g)))
    return out


def multiclass_batches(extra=(), ignore_index=None, scores=True, agree=0.6):
    g = _gen("multiclass", extra, ignore_index, scores, agree)
    out = []
    for _ in range(BATCHES):
        target = torch.randint(0, C, (N, *extra), generator=g)
        if scores:
            preds = torch.randn(N, C, *extra, generator=g)
            preds.scatter_add_(1, target.unsqueeze(1), torch.full(preds[:, :1].shape, 2.0))
        else:
            noise = torch.randint(0, C, target.shape, generator=g)
            preds = torch.where(torch.rand(target.shape, generator=g) < agree, target, noise)
        out.append((preds, _with_ignored(target, ignore_index, g)))
    return out


def multilabel_batches(extra=(), ignore_index=None, agree=0.85):
    g = _gen("multilabel", extra, ignore_index, agree)
    out = []
    for _ in range(BATCHES):
        target = torch.randint(0, 2, (N, L, *extra), generator=g)
        noise = torch.rand(target.shape, generator=g)
        preds = torch.where(torch.rand(target.shape, generator=g) < agree, target.float() * 0.6 + 0.2, noise)
        out.append((preds, _with_ignored(target, ignore_index, g)))
    return out


def group_batches(extra=(), ignore_index=None, target=True, num_groups=3):
    g = _gen("groups", extra, ignore_index, target, num_groups)
    out = []
    for _ in range(BATCHES):
        groups = torch.randint(0, num_groups, (N,), generator=g)
        t = torch.randint(0, 2, (N, *extra), generator=g)
        bias = (groups.reshape(N, *([1] * len(extra))) - 1) * 0.3
        preds = (torch.randn(t.shape, generator=g) + (t - 0.5) + bias).sigmoid()
        out.append((preds, _with_ignored(t, ignore_index, g) if target else None, groups))
    return out


def tm_reference(name, *args, **kwargs):
    """torchmetrics' functional ``name`` on the concatenated batches."""

    def reference(*columns):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return getattr(tmf, name)(*columns, *args, **kwargs)

    return reference


def _dp_reference(preds, _target, groups):
    return tmf.demographic_parity(preds, groups)


def _npv_sklearn(preds, target):
    """Binary NPV = precision of the negative class (scikit-learn: pos_label=0)."""
    return skm.precision_score(target.numpy(), (preds > 0.5).long().numpy(), pos_label=0, zero_division=0)


def _exact_sklearn(preds, target):
    """Multilabel exact match over [N, L] rows = scikit-learn's subset accuracy."""
    return skm.accuracy_score(target.numpy(), (preds > 0.5).long().numpy())


P = functools.partial
# torchmetrics divides two float32 rates; torchtally divides the float64 rates and rounds once
FLOAT32_RATIOS = dict(rtol=2.5e-7, atol=0.0)
CASES = [
    # negative predictive value
    MetricCase("binary_npv_sklearn", ttc.BinaryNegativePredictiveValue, binary_batches(), _npv_sklearn, 1e-6, 1e-7),
    MetricCase(
        "binary_npv_samplewise_ignore",
        P(ttc.BinaryNegativePredictiveValue, multidim_average="samplewise", ignore_index=-1),
        binary_batches((M,), -1),
        tm_reference("binary_negative_predictive_value", multidim_average="samplewise", ignore_index=-1),
    ),
    MetricCase(
        "multiclass_npv_macro",
        P(ttc.MulticlassNegativePredictiveValue, C),
        multiclass_batches(),
        tm_reference("multiclass_negative_predictive_value", C),
    ),
    MetricCase(
        "multiclass_npv_weighted_multidim_ignore",
        P(ttc.MulticlassNegativePredictiveValue, C, average="weighted", ignore_index=1),
        multiclass_batches((M,), 1),
        tm_reference("multiclass_negative_predictive_value", C, average="weighted", ignore_index=1),
    ),
    MetricCase(
        "multiclass_npv_top2_none",
        P(ttc.MulticlassNegativePredictiveValue, C, top_k=2, average=None),
        multiclass_batches(),
        tm_reference("multiclass_negative_predictive_value", C, average=None, top_k=2),
    ),
    MetricCase(
        "multiclass_npv_samplewise_micro",
        P(ttc.MulticlassNegativePredictiveValue, C, average="micro", multidim_average="samplewise"),
        multiclass_batches((M,), scores=False),
        tm_reference("multiclass_negative_predictive_value", C, average="micro", multidim_average="samplewise"),
    ),
    MetricCase(
        "multilabel_npv_macro_ignore",
        P(ttc.MultilabelNegativePredictiveValue, L, ignore_index=-1),
        multilabel_batches((), -1),
        tm_reference("multilabel_negative_predictive_value", L, ignore_index=-1),
    ),
    MetricCase(
        "multilabel_npv_samplewise_none",
        P(ttc.MultilabelNegativePredictiveValue, L, average=None, multidim_average="samplewise"),
        multilabel_batches((M,)),
        tm_reference("multilabel_negative_predictive_value", L, average=None, multidim_average="samplewise"),
    ),
    # exact match
    MetricCase(
        "multiclass_exact_match_labels",
        P(ttc.MulticlassExactMatch, C),
        multiclass_batches((M,), scores=False, agree=0.85),
        tm_reference("multiclass_exact_match", C),
    ),
    MetricCase(
        "multiclass_exact_match_scores_ignore",
        P(ttc.MulticlassExactMatch, C, ignore_index=-1),
        multiclass_batches((M,), -1),
        tm_reference("multiclass_exact_match", C, ignore_index=-1),
    ),
    MetricCase(  # one label per sample: the counts come from the confusion matrix's diagonal
        "multiclass_exact_match_1d_scores_ignore",
        P(ttc.MulticlassExactMatch, C, ignore_index=-1),
        multiclass_batches((), -1),
        tm_reference("multiclass_exact_match", C, ignore_index=-1),
    ),
    MetricCase(
        "multiclass_exact_match_1d_labels_ignore_a_class",
        P(ttc.MulticlassExactMatch, C, ignore_index=1),
        multiclass_batches((), 1, scores=False, agree=0.7),
        tm_reference("multiclass_exact_match", C, ignore_index=1),
    ),
    MetricCase(
        "multiclass_exact_match_samplewise",
        P(ttc.MulticlassExactMatch, C, multidim_average="samplewise"),
        multiclass_batches((2,), scores=False, agree=0.8),
        tm_reference("multiclass_exact_match", C, multidim_average="samplewise"),
    ),
    MetricCase("multilabel_exact_match_sklearn", P(ttc.MultilabelExactMatch, L), multilabel_batches(), _exact_sklearn),
    MetricCase(
        "multilabel_exact_match_multidim_ignore",
        P(ttc.MultilabelExactMatch, L, ignore_index=-1),
        multilabel_batches((M,), -1),
        tm_reference("multilabel_exact_match", L, ignore_index=-1),
    ),
    MetricCase(
        "multilabel_exact_match_samplewise",
        P(ttc.MultilabelExactMatch, L, multidim_average="samplewise", threshold=0.4),
        multilabel_batches((M,)),
        tm_reference("multilabel_exact_match", L, threshold=0.4, multidim_average="samplewise"),
    ),
    # group fairness
    MetricCase(
        "group_stat_rates",
        P(ttc.BinaryGroupStatRates, 3),
        group_batches(),
        tm_reference("binary_groups_stat_rates", num_groups=3),
        **FLOAT32_RATIOS,
    ),
    MetricCase(
        "group_stat_rates_multidim_ignore",
        P(ttc.BinaryGroupStatRates, 3, ignore_index=-1),
        group_batches((M,), -1),
        tm_reference("binary_groups_stat_rates", num_groups=3, ignore_index=-1),
        **FLOAT32_RATIOS,
    ),
    MetricCase(
        "fairness_all", P(ttc.BinaryFairness, 3), group_batches(), tm_reference("binary_fairness"), **FLOAT32_RATIOS
    ),
    MetricCase(
        "fairness_eo_threshold",
        P(ttc.BinaryFairness, 3, "equal_opportunity", 0.3),
        group_batches((M,)),
        tm_reference("binary_fairness", task="equal_opportunity", threshold=0.3),
        **FLOAT32_RATIOS,
    ),
    MetricCase(
        "fairness_dp_no_target",
        P(ttc.BinaryFairness, 3, "demographic_parity"),
        group_batches(target=False),
        _dp_reference,
        **FLOAT32_RATIOS,
    ),
    # NPV and precision sharing one state, synced once
    MetricCase(
        "collection_npv_precision",
        CollectionFactory(
            npv=P(ttc.MulticlassNegativePredictiveValue, C, average="micro"),
            precision=P(ttc.MulticlassPrecision, C, average="micro"),
        ),
        multiclass_batches(),
        lambda p, t: {
            "npv": tmf.multiclass_negative_predictive_value(p, t, C, average="micro"),
            "precision": tmf.multiclass_precision(p, t, C, average="micro"),
        },
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_lifecycle_against_the_references(case):
    check_metric(case)


@pytest.mark.distributed
def test_distributed():
    run_distributed_cases(CASES)


# -- forward per batch, compute after the forwards, as torchmetrics' classes ----------------------


def _parity(name, cls, batches, *args, **kwargs):
    """The same class and options in both libraries (fairness ratios: see FLOAT32_RATIOS)."""
    ours, theirs = P(getattr(ttc, cls), *args, **kwargs), P(getattr(tmc, cls), *args, **kwargs)
    return ParityCase(name, ours, theirs, batches, **(FLOAT32_RATIOS if "Fairness" in cls else {}))


PARITY = [
    _parity("npv_multiclass_top2", "MulticlassNegativePredictiveValue", multiclass_batches(), C, top_k=2),
    _parity(
        "npv_multilabel_weighted", "MultilabelNegativePredictiveValue", multilabel_batches((M,)), L, average="weighted"
    ),
    _parity(
        "exact_match_multiclass_samplewise",
        "MulticlassExactMatch",
        multiclass_batches((2,), 0),
        C,
        multidim_average="samplewise",
        ignore_index=0,
    ),
    _parity("exact_match_multilabel", "MultilabelExactMatch", multilabel_batches((M,), -1), L, ignore_index=-1),
    _parity("group_stat_rates", "BinaryGroupStatRates", group_batches(), 3),
    _parity("fairness_all", "BinaryFairness", group_batches((M,)), 3),
]


@pytest.mark.parametrize("case", PARITY, ids=lambda c: c.name)
def test_forward_and_compute_equal_torchmetrics_classes(case):
    for batch in case.batches:  # torchmetrics' classes count a batch's groups by their order in it
        assert len(batch) < 3 or batch[2].unique().tolist() == [0, 1, 2]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_parity(case)


ON_REFERENCE = (
    "exact_match_s",
    "group_stat_rates_multidim_ignore",
    "fairness_dp_no_target",
    "multiclass_npv_top2_none",
)


@pytest.mark.parametrize("case", [c for c in CASES if any(k in c.name for k in ON_REFERENCE)], ids=lambda c: c.name)
def test_the_torch_reference_kernels_give_the_same_counts(case):
    """What a device without compiled kernels (and the CUDA known-answer check) runs."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = _fed(case.factory(), case.batches)
        previous = kernels.set_backend("reference")
        try:
            got = _fed(case.factory(), case.batches)
        finally:
            kernels.set_backend(previous)
        assert_same(got.compute(), want.compute())
    for name, value in states_of(want).items():
        assert torch.equal(states_of(got)[name], value), name


# -- functional forms and task wrappers against torchmetrics -------------------------------------

FUNCTIONAL = [
    ("binary_negative_predictive_value", binary_batches((M,), -1, "logits")[0], dict(ignore_index=-1)),
    ("binary_negative_predictive_value", binary_batches((M,), None, "labels")[0], dict(multidim_average="samplewise")),
    ("multiclass_negative_predictive_value", multiclass_batches()[0], dict(num_classes=C, average="weighted")),
    ("multiclass_negative_predictive_value", multiclass_batches()[0], dict(num_classes=C, top_k=3, average="macro")),
    ("multilabel_negative_predictive_value", multilabel_batches((M,))[0], dict(num_labels=L, average="micro")),
    ("negative_predictive_value", multiclass_batches()[0], dict(task="multiclass", num_classes=C)),
    ("negative_predictive_value", multilabel_batches()[0], dict(task="multilabel", num_labels=L, zero_division=1)),
    ("negative_predictive_value", binary_batches()[0], dict(task="binary")),
    ("multiclass_exact_match", multiclass_batches((M,), 0)[0], dict(num_classes=C, ignore_index=0)),
    ("multiclass_exact_match", multiclass_batches((M,))[0], dict(num_classes=C, multidim_average="samplewise")),
    ("multilabel_exact_match", multilabel_batches((M,), 2)[0], dict(num_labels=L, ignore_index=2)),
    ("multilabel_exact_match", multilabel_batches((M,))[0], dict(num_labels=L, multidim_average="samplewise")),
    ("exact_match", multiclass_batches((M,), scores=False, agree=0.9)[0], dict(task="multiclass", num_classes=C)),
    ("exact_match", multilabel_batches()[0], dict(task="multilabel", num_labels=L)),
    ("binary_groups_stat_rates", group_batches((M,))[0], dict(num_groups=3)),
    ("binary_fairness", group_batches()[0], dict(task="all")),
    ("binary_fairness", group_batches()[0], dict(task="equal_opportunity", ignore_index=0)),
    ("binary_fairness", group_batches(target=False)[0], dict(task="demographic_parity")),
    ("equal_opportunity", group_batches((M,))[0], dict(threshold=0.7)),
    ("demographic_parity", group_batches(target=False)[0][::2], dict(ignore_index=1)),  # (preds, groups)
]


@pytest.mark.parametrize("name, batch, kwargs", FUNCTIONAL, ids=[f"{f[0]}-{i}" for i, f in enumerate(FUNCTIONAL)])
def test_functional_forms_equal_torchmetrics(name, batch, kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours = getattr(ttf, name)(*batch, **kwargs)
        theirs = getattr(tmf, name)(*batch, **kwargs)
    _assert_same_typed(ours, theirs, name)


def _assert_same_typed(ours, theirs, what):
    if isinstance(theirs, dict):
        assert list(ours) == list(theirs), f"{what}: keys {list(ours)} != torchmetrics {list(theirs)}"
        for key in theirs:
            _assert_same_typed(ours[key], theirs[key], f"{what}[{key}]")
        return
    assert ours.dtype == theirs.dtype and ours.shape == theirs.shape, (
        f"{what}: {ours.dtype} {tuple(ours.shape)} != torchmetrics {theirs.dtype} {tuple(theirs.shape)}"
    )
    torch.testing.assert_close(ours, theirs, rtol=1e-6, atol=1e-7, equal_nan=True)


@pytest.mark.parametrize(
    "wrapper, kwargs, cls",
    [
        (ttc.NegativePredictiveValue, dict(task="binary"), ttc.BinaryNegativePredictiveValue),
        (ttc.NegativePredictiveValue, dict(task="multiclass", num_classes=C), ttc.MulticlassNegativePredictiveValue),
        (ttc.NegativePredictiveValue, dict(task="multilabel", num_labels=L), ttc.MultilabelNegativePredictiveValue),
        (ttc.ExactMatch, dict(task="multiclass", num_classes=C), ttc.MulticlassExactMatch),
        (ttc.ExactMatch, dict(task="multilabel", num_labels=L, threshold=0.3), ttc.MultilabelExactMatch),
    ],
)
def test_task_wrappers_make_the_task_metric(wrapper, kwargs, cls):
    metric = wrapper(**kwargs)
    assert type(metric) is cls
    if kwargs["task"] != "binary" and wrapper is ttc.NegativePredictiveValue:
        assert metric.average == "micro"  # the wrappers' default (the task classes': "macro")


def test_task_wrappers_refuse_what_torchmetrics_refuses():
    with pytest.raises(ValueError, match="task"):
        ttc.ExactMatch(task="binary")
    with pytest.raises(ValueError, match="num_classes"):
        ttc.ExactMatch(task="multiclass")
    with pytest.raises(ValueError, match="num_labels"):
        ttc.NegativePredictiveValue(task="multilabel")
    with pytest.raises(ValueError, match="task"):
        ttf.exact_match(torch.zeros(2, 2), torch.zeros(2, 2), task="binary")


# -- torchmetrics' surface: names, signatures, class attributes -----------------------------------

NEW_CLASSES = ["MulticlassExactMatch", "MultilabelExactMatch", "BinaryGroupStatRates", "BinaryFairness"]
NEW_FUNCTIONS = [
    "multiclass_exact_match",
    "multilabel_exact_match",
    "exact_match",
    "binary_groups_stat_rates",
    "binary_fairness",
    "demographic_parity",
    "equal_opportunity",
]


def _params(fn, skip_first=False):
    params = list(inspect.signature(fn).parameters.values())[1 if skip_first else 0 :]
    return [(p.name, p.kind, p.default) for p in params]


@pytest.mark.parametrize("name", NEW_CLASSES)
def test_class_signature_and_attributes(name):
    ours, theirs = getattr(ttc, name), getattr(tmc, name)
    assert _params(ours.__init__) == _params(theirs.__init__)
    assert _params(ours.update) == _params(theirs.update)
    attrs = ("is_differentiable", "higher_is_better", "full_state_update", "plot_lower_bound", "plot_upper_bound")
    for attr in attrs + ("plot_legend_name",):
        assert getattr(ours, attr, None) == getattr(theirs, attr, None), attr
    assert getattr(torchtally, name) is ours


def test_exact_match_wrapper_signature():
    assert _params(ttc.ExactMatch.__new__, True) == _params(tmc.ExactMatch.__new__, True)


@pytest.mark.parametrize("name", NEW_FUNCTIONS)
def test_function_signature(name):
    assert _params(getattr(ttf, name)) == _params(getattr(tmf, name))
    assert name in ttf.__all__ and getattr(torchtally.functional, name) is getattr(ttf, name)


# -- bad input: an error naming the argument, the state unchanged -------------------------------


def _fed(metric, batches):
    for batch in batches:
        metric.update(*batch)
    return metric


BAD = [
    (
        P(ttc.MulticlassNegativePredictiveValue, C),
        multiclass_batches,
        (torch.tensor([0, 1]), torch.tensor([0, C])),
        "target",
    ),
    (
        ttc.BinaryNegativePredictiveValue,
        binary_batches,
        (torch.tensor([0.2, float("nan")]), torch.tensor([0, 1])),
        "preds",
    ),
    (P(ttc.MulticlassExactMatch, C), multiclass_batches, (torch.tensor([[0, 9]]), torch.tensor([[0, 1]])), "preds"),
    (
        P(ttc.MulticlassExactMatch, C, multidim_average="samplewise"),
        lambda: multiclass_batches((2,), scores=False),
        (torch.tensor([0, 1]), torch.tensor([0, 1])),
        "target",
    ),
    (P(ttc.MultilabelExactMatch, L), multilabel_batches, (torch.rand(2, L), torch.full((2, L), 0.5)), "target"),
    (P(ttc.MultilabelExactMatch, L), multilabel_batches, (torch.rand(2, L + 1), torch.zeros(2, L + 1)), "preds"),
    (
        P(ttc.MultilabelExactMatch, L, multidim_average="samplewise"),
        lambda: multilabel_batches((M,)),
        (torch.rand(2, L), torch.zeros(2, L, dtype=torch.long)),
        "preds",
    ),
    (P(ttc.BinaryFairness, 3), group_batches, (torch.rand(4), torch.ones(4), torch.tensor([0, 1, 2, 3])), "groups"),
    (P(ttc.BinaryFairness, 3), group_batches, (torch.rand(4), torch.ones(4), torch.tensor([0, -1, 2, 0])), "groups"),
    (P(ttc.BinaryFairness, 3), group_batches, (torch.rand(4), torch.ones(4), torch.tensor([0.0, 1.0, 2, 0])), "groups"),
    (P(ttc.BinaryFairness, 3), group_batches, (torch.rand(4), torch.ones(4), torch.tensor([0, 1, 2])), "groups"),
    (P(ttc.BinaryFairness, 3), group_batches, (torch.rand(4), None, torch.tensor([0, 1, 2, 0])), "target"),
    (P(ttc.BinaryGroupStatRates, 3), group_batches, (torch.rand(4), torch.arange(4), torch.zeros(4).long()), "target"),
    (P(ttc.BinaryGroupStatRates, 3), group_batches, (torch.rand(4), torch.ones(5), torch.zeros(4).long()), "target"),
]


@pytest.mark.parametrize("make, batches, bad, argument", BAD, ids=[f"{i}-{b[3]}" for i, b in enumerate(BAD)])
def test_bad_input_raises_naming_the_argument_and_keeps_the_state(make, batches, bad, argument):
    metric = _fed(make(), batches()[:2])
    before = metric.compute()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            metric.update(*bad)
        except (TypeError, ValueError) as exc:
            assert argument in str(exc), f"the error does not name {argument}: {exc}"
        else:
            raise AssertionError(f"{type(metric).__name__} accepted a bad {argument}")
    fresh = _fed(make(), batches()[:2])
    assert_same(metric.compute(), before)
    for name, value in states_of(fresh).items():
        assert torch.equal(states_of(metric)[name], value), f"state {name} changed"


def test_bad_options_raise():
    with pytest.raises(ValueError, match="num_groups"):
        ttc.BinaryFairness(num_groups=0)
    with pytest.raises(ValueError, match="task"):
        ttc.BinaryFairness(2, task="parity")
    with pytest.raises(ValueError, match="zero_division"):
        ttc.BinaryNegativePredictiveValue(zero_division=0.5)
    with pytest.raises(ValueError, match="multidim_average"):
        ttc.MulticlassExactMatch(3, multidim_average="rows")
    assert_rejects(ttc.MultilabelExactMatch(L), (torch.rand(2, L), torch.full((2, L), 3)), ValueError, "target")


# -- shared state ---------------------------------------------------------------------------------


def test_npv_shares_the_confusion_matrix_of_precision_and_accuracy():
    batches = multiclass_batches()
    coll = MetricCollection(
        {
            "npv": ttc.MulticlassNegativePredictiveValue(C),
            "precision": ttc.MulticlassPrecision(C),
            "accuracy": ttc.MulticlassAccuracy(C),
        }
    )
    assert len(coll.compute_groups) == 1
    _fed(coll, batches)
    states = states_of(coll)
    assert list(states) == ["accuracy.confmat"], states.keys()  # one state for the three
    assert coll["npv"].confmat is coll["precision"].confmat
    result = coll.compute()
    alone = _fed(ttc.MulticlassNegativePredictiveValue(C), batches).compute()
    assert torch.equal(result["npv"], alone)


def test_fairness_metrics_reading_targets_share_their_group_counts():
    coll = MetricCollection(
        {
            "rates": ttc.BinaryGroupStatRates(3),
            "fair": ttc.BinaryFairness(3),
            "dp": ttc.BinaryFairness(3, "demographic_parity"),
        }
    )
    groups = {tuple(sorted(v)) for v in coll.compute_groups.values()}
    assert groups == {("dp",), ("fair", "rates")}


# -- deliberate differences from torchmetrics ------------------------------------------------------


def test_npv_classes_use_zero_division():
    preds, target = torch.ones(4, dtype=torch.long), torch.tensor([0, 1, 1, 0])  # nothing predicted negative
    assert ttc.BinaryNegativePredictiveValue(zero_division=1).update(preds, target).compute() == 1.0
    assert ttc.BinaryNegativePredictiveValue().update(preds, target).compute() == 0.0
    assert ttf.binary_negative_predictive_value(preds, target, zero_division=1) == 1.0


def test_group_counts_follow_the_group_ids_when_a_batch_lacks_a_group():
    batches = group_batches()
    batches[1] = tuple(x[batches[1][2] != 0] if x is not None else None for x in batches[1])  # no group 0
    metric = _fed(ttc.BinaryGroupStatRates(3), batches)
    concat = [torch.cat([b[i] for b in batches]) for i in range(3)]
    _assert_same_typed(metric.compute(), tmf.binary_groups_stat_rates(*concat, num_groups=3), "rates")


def test_functional_fairness_keys_are_group_ids():
    preds, target = torch.tensor([0.9, 0.2, 0.8, 0.7]), torch.tensor([1, 0, 1, 0])
    rates = ttf.binary_groups_stat_rates(preds, target, torch.tensor([0, 0, 2, 2]), num_groups=3)
    assert list(rates) == ["group_0", "group_2"]
    assert list(ttf.demographic_parity(preds, torch.tensor([0, 0, 2, 2]))) == ["DP_0_2"]


def test_multilabel_samplewise_exact_match_divides_each_sample_by_its_positions():
    m = ttc.MultilabelExactMatch(2, multidim_average="samplewise")
    m.update(torch.tensor([[[1, 1], [0, 1]]]), torch.tensor([[[1, 0], [0, 1]]]))  # 1 of 2 positions
    m.update(torch.tensor([[[1, 1, 1], [0, 0, 0]]]), torch.tensor([[[1, 1, 1], [0, 0, 0]]]))  # 3 of 3
    assert m.compute().tolist() == [0.5, 1.0]
    assert m.sample_counts.tolist() == [[1, 2], [3, 3]]


def test_fairness_warns_about_a_group_without_samples():
    preds, target, groups = torch.tensor([0.9, 0.2, 0.8, 0.7]), torch.tensor([1, 0, 1, 1]), torch.tensor([0, 0, 1, 1])
    m = ttc.BinaryFairness(3)
    m.update(preds, target, groups)
    with pytest.warns(UserWarning, match=r"group\(s\) \[2\]"):
        out = m.compute()
    theirs = tmc.BinaryFairness(3)
    theirs.update(preds, target, groups)
    _assert_same_typed(out, theirs.compute(), "fairness")  # the empty group's rate is 0, as torchmetrics
    assert out == {"DP_2_1": 0.0, "EO_2_0": 0.0}
