"""Classification metric classes: the shared tester's life cycle (one process and 3 gloo ranks),
state shared in a MetricCollection (one kernel call per batch, one sync slot), bad input,
options, and the docstring examples."""

import doctest
import functools

import pytest
import torch
import torchmetrics.functional.classification as tmf
from support.classification_refs import (
    BETA,
    binary_data,
    binary_labels,
    multiclass_data,
    multiclass_labels,
    multilabel_data,
    sk_binary,
    sk_multiclass,
    sk_multilabel,
    sk_topk_accuracy,
)
from support.metric_tester import (
    MetricCase,
    assert_rejects,
    assert_same,
    check_metric,
    feed,
    run_distributed_cases,
    states_of,
)
from support.rank_pools import run_on_ranks

import torchtally
import torchtally as M
import torchtally.kernels as kernels
from torchtally import MetricCollection, NotComputableError
from torchtally.testing import count_collectives

C, L, N = 4, 3, 97
SIZES = [10, 23, 5, 31, 1, 27]  # uneven batches, N in total
TOL = dict(rtol=1e-6, atol=1e-7)


def _split(*tensors):
    out, lo = [], 0
    for size in SIZES:
        out.append(tuple(t[lo : lo + size] for t in tensors))
        lo += size
    return out


def _binary_batches():
    preds, target = binary_data(N, seed=31, kind="logits")
    target[::9] = -1  # ignored by the cases with ignore_index=-1
    return _split(preds, target)


BINARY_BATCHES = _binary_batches()
MULTICLASS_BATCHES = _split(*multiclass_data(N, C, seed=32))
MULTILABEL_BATCHES = _split(*multilabel_data(N, L, seed=33, kind="logits"))


def _bin(name, ignore=None, threshold=0.5, **kw):
    def ref(p, t):
        keep = (t != ignore) if ignore is not None else torch.ones_like(t, dtype=torch.bool)
        return sk_binary(name, t[keep].numpy(), binary_labels(p[keep], threshold), **kw)

    return ref


def _mc(name, average="macro", **kw):
    return lambda p, t: sk_multiclass(name, t.numpy(), multiclass_labels(p), C, average, **kw)


def _ml(name, average="macro", **kw):
    return lambda p, t: sk_multilabel(name, t.numpy(), binary_labels(p), average, **kw)


def _case(name, factory, batches, reference):
    return MetricCase(name, factory, batches, reference, **TOL)


P = functools.partial
CASES = [
    _case("BinaryAccuracy", P(M.BinaryAccuracy, ignore_index=-1), BINARY_BATCHES, _bin("accuracy", -1)),
    _case(
        "BinaryPrecision",
        P(M.BinaryPrecision, ignore_index=-1, threshold=0.3),
        BINARY_BATCHES,
        _bin("precision", -1, 0.3),
    ),
    _case("BinaryRecall", P(M.BinaryRecall, ignore_index=-1), BINARY_BATCHES, _bin("recall", -1)),
    _case("BinaryF1Score", P(M.BinaryF1Score, ignore_index=-1), BINARY_BATCHES, _bin("f1_score", -1)),
    _case("BinaryFBetaScore", P(M.BinaryFBetaScore, BETA, ignore_index=-1), BINARY_BATCHES, _bin("fbeta_score", -1)),
    _case("BinaryDice", P(M.BinaryDice, ignore_index=-1), BINARY_BATCHES, _bin("dice", -1)),
    _case("BinarySpecificity", P(M.BinarySpecificity, ignore_index=-1), BINARY_BATCHES, _bin("specificity", -1)),
    _case(
        "BinaryHammingDistance",
        P(M.BinaryHammingDistance, ignore_index=-1),
        BINARY_BATCHES,
        _bin("hamming_distance", -1),
    ),
    _case("BinaryStatScores", P(M.BinaryStatScores, ignore_index=-1), BINARY_BATCHES, _bin("stat_scores", -1)),
    _case(
        "BinaryConfusionMatrix",
        P(M.BinaryConfusionMatrix, ignore_index=-1, normalize="true"),
        BINARY_BATCHES,
        _bin("confusion_matrix", -1, normalize="true"),
    ),
    _case("BinaryJaccardIndex", P(M.BinaryJaccardIndex, ignore_index=-1), BINARY_BATCHES, _bin("jaccard_index", -1)),
    _case(
        "BinaryMatthewsCorrCoef",
        P(M.BinaryMatthewsCorrCoef, ignore_index=-1),
        BINARY_BATCHES,
        _bin("matthews_corrcoef", -1),
    ),
    _case(
        "BinaryCohenKappa",
        P(M.BinaryCohenKappa, ignore_index=-1, weights="linear"),
        BINARY_BATCHES,
        _bin("cohen_kappa", -1, weights="linear"),
    ),
    _case("MulticlassAccuracy", P(M.MulticlassAccuracy, C), MULTICLASS_BATCHES, _mc("accuracy")),
    _case(
        "MulticlassAccuracy-top2",
        P(M.MulticlassAccuracy, C, top_k=2, average="weighted"),
        MULTICLASS_BATCHES,
        lambda p, t: sk_topk_accuracy(t.numpy(), p.numpy(), C, 2, "weighted"),
    ),
    _case(
        "MulticlassPrecision",
        P(M.MulticlassPrecision, C, average="weighted"),
        MULTICLASS_BATCHES,
        _mc("precision", "weighted"),
    ),
    _case(
        "MulticlassRecall-top2",
        P(M.MulticlassRecall, C, top_k=2, average=None),
        MULTICLASS_BATCHES,
        lambda p, t: sk_topk_accuracy(t.numpy(), p.numpy(), C, 2, "none"),
    ),
    _case("MulticlassF1Score", P(M.MulticlassF1Score, C, average=None), MULTICLASS_BATCHES, _mc("f1_score", "none")),
    _case(
        "MulticlassFBetaScore",
        P(M.MulticlassFBetaScore, BETA, C, average="micro"),
        MULTICLASS_BATCHES,
        _mc("fbeta_score", "micro"),
    ),
    _case("MulticlassDice", P(M.MulticlassDice, C), MULTICLASS_BATCHES, _mc("dice")),
    _case("MulticlassSpecificity", P(M.MulticlassSpecificity, C), MULTICLASS_BATCHES, _mc("specificity")),
    _case(
        "MulticlassHammingDistance",
        P(M.MulticlassHammingDistance, C, average="weighted"),
        MULTICLASS_BATCHES,
        _mc("hamming_distance", "weighted"),
    ),
    _case(
        "MulticlassStatScores",
        P(M.MulticlassStatScores, C, average=None),
        MULTICLASS_BATCHES,
        _mc("stat_scores", "none"),
    ),
    _case("MulticlassConfusionMatrix", P(M.MulticlassConfusionMatrix, C), MULTICLASS_BATCHES, _mc("confusion_matrix")),
    _case(
        "MulticlassJaccardIndex",
        P(M.MulticlassJaccardIndex, C, average="micro"),
        MULTICLASS_BATCHES,
        _mc("jaccard_index", "micro"),
    ),
    _case(
        "MulticlassMatthewsCorrCoef", P(M.MulticlassMatthewsCorrCoef, C), MULTICLASS_BATCHES, _mc("matthews_corrcoef")
    ),
    _case(
        "MulticlassCohenKappa",
        P(M.MulticlassCohenKappa, C, weights="quadratic"),
        MULTICLASS_BATCHES,
        _mc("cohen_kappa", weights="quadratic"),
    ),
    _case("MultilabelAccuracy", P(M.MultilabelAccuracy, L), MULTILABEL_BATCHES, _ml("accuracy")),
    _case(
        "MultilabelPrecision",
        P(M.MultilabelPrecision, L, average="micro"),
        MULTILABEL_BATCHES,
        _ml("precision", "micro"),
    ),
    _case(
        "MultilabelRecall", P(M.MultilabelRecall, L, average="weighted"), MULTILABEL_BATCHES, _ml("recall", "weighted")
    ),
    _case("MultilabelF1Score", P(M.MultilabelF1Score, L), MULTILABEL_BATCHES, _ml("f1_score")),
    _case(
        "MultilabelFBetaScore",
        P(M.MultilabelFBetaScore, BETA, L, average=None),
        MULTILABEL_BATCHES,
        _ml("fbeta_score", "none"),
    ),
    _case("MultilabelDice", P(M.MultilabelDice, L), MULTILABEL_BATCHES, _ml("dice")),
    _case("MultilabelSpecificity", P(M.MultilabelSpecificity, L), MULTILABEL_BATCHES, _ml("specificity")),
    _case("MultilabelHammingDistance", P(M.MultilabelHammingDistance, L), MULTILABEL_BATCHES, _ml("hamming_distance")),
    _case(
        "MultilabelStatScores",
        P(M.MultilabelStatScores, L, average="micro"),
        MULTILABEL_BATCHES,
        _ml("stat_scores", "micro"),
    ),
    _case(
        "MultilabelConfusionMatrix",
        P(M.MultilabelConfusionMatrix, L, normalize="all"),
        MULTILABEL_BATCHES,
        _ml("confusion_matrix", normalize="all"),
    ),
    _case("MultilabelJaccardIndex", P(M.MultilabelJaccardIndex, L), MULTILABEL_BATCHES, _ml("jaccard_index")),
    _case(
        "MultilabelMatthewsCorrCoef", P(M.MultilabelMatthewsCorrCoef, L), MULTILABEL_BATCHES, _ml("matthews_corrcoef")
    ),
]


# -- torchmetrics' options beyond global counts: samplewise, top_k, float targets ----------------
# (reference: torchmetrics' functional form over all the data; its parity is in test_classification_parity)


def _multidim_batches(seed):
    g = torch.Generator().manual_seed(seed)
    n = sum(SIZES)
    binary_t = torch.randint(0, 2, (n, 5), generator=g)
    binary_p = torch.randn(n, 5, generator=g) + binary_t - 0.5
    binary_t[::7, 1] = -1
    mc_t = torch.randint(0, C, (n, 5), generator=g)
    mc_p = torch.randn(n, C, 5, generator=g)
    mc_t[::5, 2] = -1
    ml_t = torch.randint(0, 2, (n, L, 4), generator=g)
    ml_p = torch.rand(n, L, 4, generator=g)
    return _split(binary_p, binary_t), _split(mc_p, mc_t), _split(ml_p, ml_t)


BINARY_MULTIDIM, MULTICLASS_MULTIDIM, MULTILABEL_MULTIDIM = _multidim_batches(34)
FLOAT_TARGET_BATCHES = [(p, t.clamp(min=0).float()) for p, t in BINARY_BATCHES]


def _tm(name, *args, **kwargs):
    return lambda p, t: getattr(tmf, name)(p, t.long() if t.is_floating_point() else t, *args, **kwargs)


SW = dict(multidim_average="samplewise")
CASES += [
    _case(
        "BinaryAccuracy-samplewise",
        P(M.BinaryAccuracy, ignore_index=-1, **SW),
        BINARY_MULTIDIM,
        _tm("binary_accuracy", ignore_index=-1, **SW),
    ),
    _case(
        "BinaryStatScores-samplewise",
        P(M.BinaryStatScores, ignore_index=-1, **SW),
        BINARY_MULTIDIM,
        _tm("binary_stat_scores", ignore_index=-1, **SW),
    ),
    _case("BinaryF1Score-float-target", M.BinaryF1Score, FLOAT_TARGET_BATCHES, _tm("binary_f1_score")),
    _case(
        "MulticlassF1Score-top2-samplewise",
        P(M.MulticlassF1Score, C, top_k=2, ignore_index=-1, **SW),
        MULTICLASS_MULTIDIM,
        _tm("multiclass_f1_score", C, top_k=2, ignore_index=-1, **SW),
    ),
    _case(
        "MulticlassStatScores-samplewise",
        P(M.MulticlassStatScores, C, average=None, ignore_index=-1, **SW),
        MULTICLASS_MULTIDIM,
        _tm("multiclass_stat_scores", C, average=None, ignore_index=-1, **SW),
    ),
    _case(
        "MulticlassPrecision-top2",
        P(M.MulticlassPrecision, C, top_k=2),
        MULTICLASS_BATCHES,
        _tm("multiclass_precision", C, top_k=2),
    ),
    _case(
        "MulticlassSpecificity-top3",
        P(M.MulticlassSpecificity, C, top_k=3, average=None),
        MULTICLASS_BATCHES,
        _tm("multiclass_specificity", C, top_k=3, average=None),
    ),
    _case(
        "MultilabelRecall-samplewise",
        P(M.MultilabelRecall, L, average="weighted", **SW),
        MULTILABEL_MULTIDIM,
        _tm("multilabel_recall", L, average="weighted", **SW),
    ),
]


CASES += [  # negative predictive value: torchmetrics' functional forms as the reference
    _case(
        "BinaryNegativePredictiveValue",
        P(M.BinaryNegativePredictiveValue, ignore_index=-1),
        BINARY_BATCHES,
        _tm("binary_negative_predictive_value", ignore_index=-1),
    ),
    _case(
        "MulticlassNegativePredictiveValue",
        P(M.MulticlassNegativePredictiveValue, C, average="weighted"),
        MULTICLASS_BATCHES,
        _tm("multiclass_negative_predictive_value", C, average="weighted"),
    ),
    _case(
        "MultilabelNegativePredictiveValue",
        P(M.MultilabelNegativePredictiveValue, L),
        MULTILABEL_BATCHES,
        _tm("multilabel_negative_predictive_value", L),
    ),
]


def shared_multiclass_collection() -> MetricCollection:
    """Eight metrics on one [C, C] confusion matrix, two on one top-2 state (module level: picklable)."""
    return MetricCollection(
        {
            "acc": M.MulticlassAccuracy(C, average="micro"),
            "prec": M.MulticlassPrecision(C),
            "rec": M.MulticlassRecall(C, average="weighted"),
            "f1": M.MulticlassF1Score(C),
            "spec": M.MulticlassSpecificity(C),
            "cm": M.MulticlassConfusionMatrix(C),
            "mcc": M.MulticlassMatthewsCorrCoef(C),
            "kappa": M.MulticlassCohenKappa(C),
            "top2": M.MulticlassAccuracy(C, top_k=2, average="micro"),
            "rec2": M.MulticlassRecall(C, top_k=2, average="micro"),
        }
    )


SHARED_REFERENCE = {
    "acc": _mc("accuracy", "micro"),
    "prec": _mc("precision"),
    "rec": _mc("recall", "weighted"),
    "f1": _mc("f1_score"),
    "spec": _mc("specificity"),
    "cm": _mc("confusion_matrix"),
    "mcc": _mc("matthews_corrcoef"),
    "kappa": _mc("cohen_kappa"),
    "top2": lambda p, t: sk_topk_accuracy(t.numpy(), p.numpy(), C, 2, "micro"),
    "rec2": lambda p, t: sk_topk_accuracy(t.numpy(), p.numpy(), C, 2, "micro"),
}
CASES.append(
    _case(
        "shared-collection",
        shared_multiclass_collection,
        MULTICLASS_BATCHES,
        lambda p, t: {k: ref(p, t) for k, ref in SHARED_REFERENCE.items()},
    )
)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_lifecycle(case):
    check_metric(case)


@pytest.mark.distributed
def test_distributed_three_ranks():
    run_distributed_cases(CASES)  # ONE 3-rank gloo run for all the cases


def test_every_class_is_covered():
    covered = {c.name.split("-")[0] for c in CASES}
    import importlib

    files = "stat_scores accuracy hamming specificity negative_predictive_value precision_recall f_beta dice"
    files += " confusion_matrix jaccard matthews_corrcoef cohen_kappa"
    modules = [importlib.import_module(f"torchtally.classification.{name}") for name in files.split()]
    exported = {name for module in modules for name in module.__all__}
    assert exported <= set(M.classification.__all__)
    task_classes = {name for name in exported if name.startswith(("Binary", "Multiclass", "Multilabel"))}
    assert task_classes - covered == set()
    assert len(task_classes) == 41  # the 13 task wrappers (Accuracy(task=...), ...): test_classification_signatures
    assert all(getattr(torchtally, name) is getattr(M, name) for name in exported)


# -- shared state -----------------------------------------------------------------------------


def _count_kernel_calls(monkeypatch):
    calls = {}
    for name in ("confmat_scores", "confmat_labels", "confmat_threshold", "topk_update"):
        original = getattr(kernels, name)

        def counted(*args, _name=name, _original=original, **kwargs):
            calls[_name] = calls.get(_name, 0) + 1
            return _original(*args, **kwargs)

        monkeypatch.setattr(kernels, name, counted)
    return calls


def test_shared_state_one_kernel_call_per_batch_and_one_sync_slot(monkeypatch):
    calls = _count_kernel_calls(monkeypatch)
    collection = feed(shared_multiclass_collection(), MULTICLASS_BATCHES)
    assert calls == {"confmat_scores": len(SIZES), "topk_update": len(SIZES)}
    owners = {collection._owner_of[name] for name in collection}
    assert owners == {"acc", "rec2"}  # dict keys are taken in sorted order (torchmetrics)
    plan = collection._sync_plan()
    assert [s.shape for s in plan.specs] == [(C, C), (C, 3)]
    assert len(plan.fixed_groups) == 1  # both int64 sum states in one packed all_reduce
    results = collection.compute()
    for name in collection:  # the same numbers as the metrics alone
        alone = feed(shared_multiclass_collection()[name].clone(), MULTICLASS_BATCHES)
        assert_same(results[name], alone.compute(), what=name)


def test_binary_and_multilabel_metrics_share_their_state(monkeypatch):
    calls = _count_kernel_calls(monkeypatch)
    binary = MetricCollection(
        [
            M.BinaryAccuracy(),
            M.BinaryF1Score(),
            M.BinaryMatthewsCorrCoef(),
            M.BinaryConfusionMatrix(),
            M.BinaryCohenKappa(),
            M.BinaryJaccardIndex(),
        ]
    )
    feed(binary, [(p, t.clamp(min=0)) for p, t in BINARY_BATCHES])
    assert calls == {"confmat_threshold": len(SIZES)}
    multilabel = MetricCollection(
        [
            M.MultilabelAccuracy(L),
            M.MultilabelPrecision(L),
            M.MultilabelRecall(L),
            M.MultilabelStatScores(L),
            M.MultilabelMatthewsCorrCoef(L),
        ]
    )
    feed(multilabel, MULTILABEL_BATCHES)
    assert calls == {"confmat_threshold": 2 * len(SIZES)}
    assert len(binary._sync_plan().specs) == 1 and len(multilabel._sync_plan().specs) == 1


def test_top_k_and_samplewise_metrics_share_their_state(monkeypatch):
    calls = _count_kernel_calls(monkeypatch)
    top2 = MetricCollection(
        [
            M.MulticlassAccuracy(C, top_k=2),
            M.MulticlassPrecision(C, top_k=2),
            M.MulticlassF1Score(C, top_k=2),
            M.MulticlassStatScores(C, top_k=2),
        ]
    )
    results = feed(top2, MULTICLASS_BATCHES).compute()
    assert calls == {"topk_update": len(SIZES)}
    assert len(top2._sync_plan().specs) == 1
    for name, value in results.items():
        assert_same(value, feed(top2[name].clone().reset(), MULTICLASS_BATCHES).compute(), what=name)
    samplewise = MetricCollection(
        [
            M.BinaryAccuracy(multidim_average="samplewise", ignore_index=-1),
            M.BinaryF1Score(multidim_average="samplewise", ignore_index=-1),
            M.BinaryStatScores(multidim_average="samplewise", ignore_index=-1),
        ]
    )
    calls.clear()
    results = feed(samplewise, BINARY_MULTIDIM).compute()
    assert calls == {"confmat_threshold": len(SIZES)}
    assert len(samplewise._sync_plan().specs) == 1
    for name, value in results.items():
        assert value.shape[0] == sum(SIZES)
        assert_same(value, feed(samplewise[name].clone().reset(), BINARY_MULTIDIM).compute(), what=name)


def test_different_state_options_do_not_share():
    keys = [
        m.state_key
        for m in (
            M.MulticlassAccuracy(C),
            M.MulticlassAccuracy(C, ignore_index=0),
            M.MulticlassAccuracy(C + 1),
            M.MulticlassAccuracy(C, top_k=2),
            M.MulticlassAccuracy(C, top_k=3),
            M.BinaryAccuracy(),
            M.BinaryAccuracy(threshold=0.3),
            M.BinaryAccuracy(ignore_index=-1),
            M.MultilabelAccuracy(L),
            M.MultilabelAccuracy(L, threshold=0.7),
            M.MultilabelAccuracy(L + 1),
            M.BinaryAccuracy(multidim_average="samplewise"),
            M.MulticlassAccuracy(C, multidim_average="samplewise"),
            M.MulticlassAccuracy(C, multidim_average="samplewise", top_k=2),
            M.MultilabelAccuracy(L, multidim_average="samplewise"),
        )
    ]
    assert len(set(keys)) == len(keys)
    assert M.MulticlassAccuracy(C).state_key == M.MulticlassCohenKappa(C).state_key
    collection = MetricCollection({"a": M.BinaryAccuracy(), "b": M.BinaryAccuracy(threshold=0.9)})
    preds, target = torch.tensor([0.2, 0.6, 0.95]), torch.tensor([0, 1, 1])
    out = collection.update(preds, target).compute()
    assert float(out["a"]) == 1.0 and abs(float(out["b"]) - 2 / 3) < 1e-6


def _sync_count_worker(rank, world_size):
    """Per rank: its shard of the batches, then one counted compute of the shared collection."""
    collection = shared_multiclass_collection()
    feed(collection, MULTICLASS_BATCHES[rank::world_size])
    with count_collectives() as counter:
        results = collection.compute()
    # The values packed: the plan is small, so they travel in the header (sync_plan.SmallLayout).
    small = collection._sync_plan().small
    packed = [sum(g.numels) for g, _ in small.groups] if small is not None else None
    return dict(counter.by_name), packed, results


@pytest.mark.distributed
def test_shared_state_syncs_once():
    per_rank = run_on_ranks(_sync_count_worker, 2)
    expected = feed(shared_multiclass_collection(), MULTICLASS_BATCHES).compute()
    for by_name, packed, results in per_rank:
        assert by_name == {"all_to_all_single": 1}, by_name  # the header (gloo all_to_all), carrying the packed states
        assert packed == [C * C + C * 3], packed  # one int64 sum group: one confusion matrix, one top-k table
        assert_same(results, expected, **TOL)


# -- bad input --------------------------------------------------------------------------------

NAN = float("nan")
BAD_INPUTS = [
    # (metric factory, preds, target, exception, message pattern)
    (M.BinaryAccuracy, torch.tensor([0.2, NAN]), torch.tensor([0, 1]), ValueError, "preds: NaN"),
    (P(M.BinaryAccuracy, ignore_index=-1), torch.tensor([0.2, NAN]), torch.tensor([0, -1]), ValueError, "preds: NaN"),
    (
        M.BinaryAccuracy,
        torch.tensor([0.2, 0.3]),
        torch.tensor([0, 1, 1]),
        ValueError,
        r"target: expected the shape of preds \[2\]",
    ),
    (M.BinaryAccuracy, torch.tensor([0.2, 0.3]), torch.tensor([0, 2]), ValueError, "target: .*2.* not a binary label"),
    (M.BinaryAccuracy, torch.tensor([0, 3]), torch.tensor([0, 1]), ValueError, "preds: .*3"),
    (
        M.BinaryAccuracy,
        torch.tensor([0.2, 0.3]),
        torch.tensor([0.0, 0.5]),
        ValueError,
        "target: a float target must hold 0 or 1, got 0.5 at index 1",
    ),
    (M.BinaryAccuracy, torch.tensor([0.2, 0.3]), torch.tensor([NAN, 1.0]), ValueError, "target: a float target"),
    (
        P(M.BinaryAccuracy, multidim_average="samplewise"),
        torch.tensor([0.2, 0.3]),
        torch.tensor([0, 1]),
        ValueError,
        "preds: multidim_average='samplewise' needs",
    ),
    (
        P(M.BinaryAccuracy, multidim_average="samplewise"),
        torch.rand(2, 3),
        torch.tensor([[0, 1, 1], [0, 2, 1]]),
        ValueError,
        "target: .*2",
    ),
    (M.BinaryAccuracy, [0.2, 0.3], torch.tensor([0, 1]), TypeError, "preds: expected a torch.Tensor"),
    (P(M.MulticlassAccuracy, C), torch.tensor([[0.1] * C, [NAN] * C]), torch.tensor([0, 1]), ValueError, "preds: NaN"),
    (
        P(M.MulticlassAccuracy, C),
        torch.randn(2, C + 1),
        torch.tensor([0, 1]),
        ValueError,
        r"preds: expected scores \[N, C, \.\.\.\] with C = num_classes = 4",
    ),
    (P(M.MulticlassAccuracy, C), torch.randn(3, C), torch.tensor([0, 1]), ValueError, r"target: expected shape \[3\]"),
    (
        P(M.MulticlassAccuracy, C),
        torch.randn(2, C),
        torch.tensor([0, C]),
        ValueError,
        "target: label 4 .* out of range",
    ),
    (
        P(M.MulticlassAccuracy, C),
        torch.tensor([0, 7]),
        torch.tensor([0, 1]),
        ValueError,
        "preds: label 7 .* out of range",
    ),
    (
        P(M.MulticlassAccuracy, C),
        torch.tensor([0.0, 1.0]),
        torch.tensor([0, 1]),
        TypeError,
        "preds: expected integer class labels",
    ),
    (
        P(M.MulticlassAccuracy, C),
        torch.randint(0, C, (2, C)),
        torch.tensor([0, 1]),
        TypeError,
        "preds: with one dim more",
    ),
    (P(M.MulticlassAccuracy, C), torch.randn(2, C, 2, 2), torch.tensor([0, 1]), ValueError, "preds: expected labels"),
    (
        P(M.MulticlassAccuracy, C, top_k=2),
        torch.tensor([0, 1]),
        torch.tensor([0, 1]),
        ValueError,
        "preds: top_k = 2 needs float scores",
    ),
    (
        P(M.MulticlassAccuracy, C, top_k=2),
        torch.tensor([[0.1] * C, [NAN] * C]),
        torch.tensor([0, 1]),
        ValueError,
        "preds: NaN",
    ),
    (
        P(M.MultilabelAccuracy, L),
        torch.rand(2, L + 1),
        torch.randint(0, 2, (2, L + 1)),
        ValueError,
        r"preds: expected shape \[N, L, \.\.\.\] with L = num_labels = 3",
    ),
    (P(M.MultilabelAccuracy, L), torch.tensor([[0.1, NAN, 0.3]]), torch.tensor([[0, 1, 1]]), ValueError, "preds: NaN"),
    (P(M.MultilabelAccuracy, L), torch.rand(2, L), torch.tensor([[0, 1, 1], [1, 3, 0]]), ValueError, "target: .*3"),
    (
        P(M.MultilabelAccuracy, L),
        torch.rand(2, L),
        torch.tensor([[0.0, 1.0, 2.0], [1.0, 0.0, 0.0]]),
        ValueError,
        "target: a float target must hold 0 or 1",
    ),
    (
        P(M.MulticlassAccuracy, C, multidim_average="samplewise"),
        torch.randn(2, C, 3),
        torch.tensor([[0, 1, 1], [0, C, 1]]),
        ValueError,
        "target: label 4 .* out of range",
    ),
    (
        P(M.MulticlassAccuracy, C, multidim_average="samplewise"),
        torch.randn(2, C),
        torch.tensor([0, 1]),
        ValueError,
        "preds: multidim_average='samplewise' needs",
    ),
    (
        P(M.MulticlassAccuracy, C, multidim_average="samplewise", top_k=2),
        torch.full((2, C, 3), NAN),
        torch.tensor([[0, 1, 1], [0, 2, 1]]),
        ValueError,
        "preds: NaN",
    ),
    (
        P(M.MultilabelAccuracy, L, multidim_average="samplewise"),
        torch.rand(2, L, 2),
        torch.tensor([[[0, 1], [1, 1], [0, 0]], [[0, 1], [1, 5], [0, 0]]]),
        ValueError,
        "target: .*5",
    ),
]


def _good_batch(metric):
    samplewise = metric.multidim_average == "samplewise"
    if isinstance(metric, M.MulticlassAccuracy):
        preds, target = MULTICLASS_BATCHES[0]
        return (
            (preds.reshape(-1, C, 1).expand(-1, C, 2), target[:, None].expand(-1, 2)) if samplewise else (preds, target)
        )
    if isinstance(metric, M.MultilabelAccuracy):
        preds, target = MULTILABEL_BATCHES[0]
        return (preds[..., None], target[..., None]) if samplewise else (preds, target)
    preds, target = BINARY_BATCHES[0]
    return (preds[:, None], target[:, None].clamp(min=0)) if samplewise else (preds, target.clamp(min=0))


@pytest.mark.parametrize("factory, preds, target, exc, match", BAD_INPUTS)
def test_bad_input_raises_and_leaves_state_unchanged(factory, preds, target, exc, match):
    metric = factory()
    assert_rejects(metric, (preds, target), exc, match)  # before any update
    metric.update(*_good_batch(metric))
    assert_rejects(metric, (preds, target), exc, match)  # after one, inside a collection too
    collection = MetricCollection({"m": metric})
    before = states_of(metric)
    with pytest.raises(exc):
        collection.update(preds, target)
    assert all(torch.equal(before[k], v) for k, v in states_of(metric).items())


@pytest.mark.parametrize(
    "factory, preds, target, match",
    [
        (M.BinaryAccuracy, torch.tensor([0.2, 0.7]), torch.tensor([0, 3]), "target"),
        (M.BinaryF1Score, torch.tensor([0.2, 0.7]), torch.tensor([0.0, 0.4]), "target: a float target"),
        (P(M.MulticlassPrecision, C), torch.tensor([0, 1]), torch.tensor([0, C + 2]), "target: label 6"),
        (P(M.MulticlassF1Score, C, top_k=2), torch.tensor([[NAN] * C, [0.0] * C]), torch.tensor([0, 1]), "preds: NaN"),
        (
            P(M.MultilabelRecall, L, multidim_average="samplewise"),
            torch.rand(2, L, 2),
            torch.full((2, L, 2), 7),
            "target",
        ),
        (P(M.MulticlassConfusionMatrix, C), torch.tensor([0, -3]), torch.tensor([0, 1]), "preds: label -3"),
    ],
    ids=lambda v: getattr(v, "func", v).__name__ if callable(v) else None,
)
def test_validate_args_false_still_rejects_bad_input(factory, preds, target, match):
    """torchmetrics skips its checks with validate_args=False (and then returns a number from bad
    labels); torchtally's checks are part of the kernels' one pass, so they always run."""
    metric = factory(validate_args=False)
    assert metric.validate_args is False
    assert_rejects(metric, (preds, target), ValueError, match)


def test_device_mismatch_is_rejected():
    # A fresh metric follows its input's device (tests/base/test_placement.py); one holding data refuses.
    metric = M.MulticlassAccuracy(C).update(torch.randn(2, C), torch.tensor([0, 1]))
    assert_rejects(metric, (torch.randn(2, C, device="meta"), torch.tensor([0, 1], device="meta")), ValueError, "preds")


@pytest.mark.filterwarnings("ignore:.*NaN values found in confusion matrix")  # normalised, empty: as torchmetrics
@pytest.mark.parametrize("factory", [case.factory for case in CASES[:-1]], ids=[c.name for c in CASES[:-1]])
def test_compute_before_update_warns_or_raises_in_ignite_mode(factory):
    metric = factory()
    with metric.raising_if_never_updated(), pytest.raises(NotComputableError):
        metric.compute()
    with pytest.warns(UserWarning, match="before the ``update`` method"):
        metric.compute()


def test_empty_batch_counts_as_an_update():
    metric = M.MulticlassConfusionMatrix(C).update(torch.empty(0, C), torch.empty(0, dtype=torch.long))
    assert metric.compute().sum() == 0


@pytest.mark.parametrize(
    "make, match",
    [
        (lambda: M.MulticlassAccuracy(1), "num_classes: expected an int >= 2"),
        (lambda: M.MulticlassAccuracy(3.0), "num_classes: expected an int >= 2"),
        (lambda: M.MultilabelAccuracy(0), "num_labels: expected an int >= 2"),
        (lambda: M.BinaryAccuracy(threshold=1.5), r"threshold: expected a float in \[0, 1\]"),
        (lambda: M.BinaryAccuracy(threshold="0.5"), "threshold"),
        (lambda: M.MulticlassAccuracy(C, average="binary"), "average: expected one of"),
        (lambda: M.MulticlassAccuracy(C, top_k=C + 1), r"top_k: expected an int in \[1, num_classes = 4\]"),
        (lambda: M.MulticlassAccuracy(None, average="micro"), "num_classes: expected an int >= 2, got None"),
        (lambda: M.MulticlassConfusionMatrix(C, top_k=2), r"unexpected keyword arguments \['top_k'\]"),
        (lambda: M.BinaryPrecision(zero_division=0.5), "zero_division: expected 0 or 1"),
        (lambda: M.MulticlassConfusionMatrix(C, normalize="rows"), "normalize: expected"),
        (lambda: M.MulticlassCohenKappa(C, weights="cubic"), "weights: expected"),
        (lambda: M.BinaryFBetaScore(beta=0.0), "beta: expected a number > 0"),
        (lambda: M.BinaryAccuracy(ignore_index=1.5), "ignore_index: expected None or an int"),
        (lambda: M.BinaryAccuracy(multidim_average="sample"), "multidim_average: expected 'global' or 'samplewise'"),
        (lambda: M.BinaryPrecision(zero_division=2), "zero_division: expected 0 or 1"),
    ],
)
def test_bad_options_are_named(make, match):
    with pytest.raises((ValueError, TypeError), match=match):
        make()


def test_torchmetrics_style_options_are_accepted():
    m = M.MulticlassAccuracy(
        num_classes=C, average="micro", multidim_average="global", validate_args=False, sync_on_compute=False
    )
    preds, target = MULTICLASS_BATCHES[1]
    assert abs(float(m.update(preds, target).compute()) - float((preds.argmax(1) == target).float().mean())) < 1e-6


# -- dtypes, layouts, backends ------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float64])
def test_score_dtypes(dtype):
    preds, target = MULTICLASS_BATCHES[3]
    preds = preds.to(dtype)
    expected = M.MulticlassConfusionMatrix(C).update(preds.double(), target).compute()
    assert torch.equal(M.MulticlassConfusionMatrix(C).update(preds, target).compute(), expected)


@pytest.mark.parametrize("dtype", [torch.uint8, torch.int8, torch.int16, torch.int32, torch.bool])
def test_label_dtypes(dtype):
    preds, target = MULTILABEL_BATCHES[3]
    expected = M.MultilabelStatScores(L, average=None).update(preds, target).compute()
    assert torch.equal(M.MultilabelStatScores(L, average=None).update(preds, target.to(dtype)).compute(), expected)
    labels = (preds > 0).to(dtype)
    assert torch.equal(M.MultilabelStatScores(L, average=None).update(labels, target).compute(), expected)


def test_non_contiguous_and_grad_inputs():
    preds, target = MULTICLASS_BATCHES[3]
    strided = preds.t().contiguous().t()  # column-major
    assert not strided.is_contiguous()
    a = M.MulticlassConfusionMatrix(C).update(preds, target).compute()
    assert torch.equal(M.MulticlassConfusionMatrix(C).update(strided, target).compute(), a)
    assert torch.equal(M.MulticlassConfusionMatrix(C).update(preds.requires_grad_(), target).compute(), a)
    logits, t = BINARY_BATCHES[3]
    b = M.BinaryStatScores().update(logits.clone().requires_grad_(), t.clamp(min=0)).compute()
    assert torch.equal(b, M.BinaryStatScores().update(logits, t.clamp(min=0)).compute())


def test_reference_backend_gives_the_same_state():
    """The update path on the torch reference (other devices) equals the C core."""
    if not kernels.has_c():
        pytest.skip("torchtally._C is not built: both paths are the reference")
    factories = [
        shared_multiclass_collection,
        lambda: M.BinaryStatScores(ignore_index=-1),
        lambda: M.MultilabelStatScores(L, average=None),
        lambda: M.BinaryStatScores(ignore_index=-1, multidim_average="samplewise"),
        lambda: M.MulticlassStatScores(C, top_k=2, ignore_index=-1, multidim_average="samplewise"),
        lambda: M.MultilabelStatScores(L, multidim_average="samplewise"),
        lambda: M.BinaryStatScores(),
    ]
    data = [
        MULTICLASS_BATCHES,
        BINARY_BATCHES,
        MULTILABEL_BATCHES,
        BINARY_MULTIDIM,
        MULTICLASS_MULTIDIM,
        MULTILABEL_MULTIDIM,
        FLOAT_TARGET_BATCHES,
    ]
    for factory, batches in zip(factories, data):
        c_state = states_of(feed(factory(), batches))
        previous = kernels.set_backend("reference")
        try:
            ref_state = states_of(feed(factory(), batches))
        finally:
            kernels.set_backend(previous)
        assert c_state.keys() == ref_state.keys()
        assert all(torch.equal(c_state[k], ref_state[k]) for k in c_state)


# -- docstring examples -------------------------------------------------------------------------


@pytest.mark.parametrize("module", ["stat_scores", "precision_recall", "f_beta", "confusion_matrix", "accuracy"])
def test_docstring_examples(module):
    import importlib

    mod = importlib.import_module(f"torchtally.classification.{module}")
    failed, attempted = doctest.testmod(mod)
    assert attempted > 0 and failed == 0


def test_functional_docstring_examples():
    import torchtally.functional.classification as fc

    failed, attempted = doctest.testmod(fc)
    assert attempted > 0 and failed == 0


def test_samplewise_ignored_elements_are_not_counted_nor_range_checked():
    """As the global update: an ignored element's label is not checked (the kernels' rule), and it
    must not reach the per-sample counts either (nor index outside them)."""
    preds, target = torch.tensor([[0, 99, 1], [2, 1, -5]]), torch.tensor([[0, -1, 1], [2, 1, -1]])
    per_sample = M.MulticlassStatScores(3, average=None, ignore_index=-1, multidim_average="samplewise")
    per_sample.update(preds, target)
    for i in range(2):
        keep = target[i] != -1
        alone = M.MulticlassStatScores(3, average=None).update(preds[i][keep], target[i][keep]).compute()
        assert torch.equal(per_sample.compute()[i], alone)


@pytest.mark.parametrize("num_classes, ignore_index", [(2, None), (5, None), (5, -1), (5, 2)])
def test_multiclass_micro_stat_scores_from_the_confusion_matrix(num_classes, ignore_index):
    """The micro sums come from the matrix's trace and total: equal to the per-class table
    summed, and to torchmetrics, with and without ignored samples."""
    g = torch.Generator().manual_seed(num_classes)
    preds = torch.randint(0, num_classes, (40,), generator=g)
    target = torch.randint(0, num_classes, (40,), generator=g)
    if ignore_index is not None:
        target[::7] = ignore_index
    kwargs = {"ignore_index": ignore_index}
    micro = M.classification.MulticlassStatScores(num_classes, average="micro", **kwargs).update(preds, target)
    per_class = M.classification.MulticlassStatScores(num_classes, average="none", **kwargs).update(preds, target)
    got = micro.compute()
    assert got.dtype == torch.int64 and torch.equal(got, per_class.compute().sum(0))
    want = tmf.multiclass_stat_scores(preds, target, num_classes, average="micro", **kwargs)
    assert torch.equal(got, want)
