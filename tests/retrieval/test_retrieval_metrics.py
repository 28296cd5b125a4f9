"""Retrieval metrics against torchmetrics 1.9 (values, empty queries, ignore_index, aggregation,
top_k / adaptive_k) and scikit-learn (ndcg_score, average_precision_score); the functional forms;
queries_complete; tie order independent of the split into batches; bad input refused with the
state untouched; the shared life-cycle checks."""

import functools

import numpy as np
import pytest
import sklearn.metrics as skm
import torch
import torchmetrics.functional.retrieval as tmf
import torchmetrics.retrieval as tmr
from support.metric_tester import MetricCase, assert_rejects, check_metric

import torchtally.functional.retrieval as ttf
import torchtally.retrieval as ttr

NAMES = (
    "RetrievalMAP",
    "RetrievalMRR",
    "RetrievalNormalizedDCG",
    "RetrievalPrecision",
    "RetrievalRecall",
    "RetrievalHitRate",
    "RetrievalFallOut",
    "RetrievalRPrecision",
)
TOP_K = tuple(n for n in NAMES if n != "RetrievalRPrecision")


def documents(seed: int, n: int = 400, queries: int = 40, ties: str = "none", graded: bool = False):
    """(preds, target, indexes): scores with negative ones (torchmetrics' "scored <= 0 is not
    retrieved" rule), queries without a positive and without a negative. ties: "none" (distinct
    scores), "same" (ties only among documents of one relevance: every order gives one value) or
    "any"."""
    g = torch.Generator().manual_seed(seed)
    indexes = torch.randint(0, queries, (n,), generator=g)
    target = torch.randint(0, 4 if graded else 2, (n,), generator=g)
    target[indexes == 3] = 0  # no positive
    target[indexes == 5] = 1  # no negative
    if ties == "none":
        preds = (torch.randperm(n, generator=g).float() - n / 4) / n
    elif ties == "same":
        preds = torch.randint(-2, 6, (n,), generator=g).float() + 10.0 * target.float()
    else:
        preds = torch.randint(-2, 6, (n,), generator=g).float() / 4
    return preds, target if graded else target.bool(), indexes


def pair(name, **kwargs):
    return getattr(ttr, name)(**kwargs), getattr(tmr, name)(**kwargs)


def both(name, batches, **kwargs):
    ours, theirs = pair(name, **kwargs)
    for b in batches:
        ours.update(*b)
        theirs.update(*b)
    return ours, theirs


def assert_same(ours, theirs, atol=1e-6):
    a, b = ours.compute(), theirs.compute()
    assert a.shape == b.shape
    torch.testing.assert_close(a.float(), b.float(), rtol=1e-5, atol=atol)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("action", ["neg", "pos", "skip"])
@pytest.mark.parametrize("ties", ["none", "same"])
def test_values_match_torchmetrics(name, action, ties):
    preds, target, indexes = documents(len(name) + len(action), ties=ties)
    batches = [(preds[i : i + 70], target[i : i + 70], indexes[i : i + 70]) for i in range(0, 400, 70)]
    assert_same(*both(name, batches, empty_target_action=action))


@pytest.mark.parametrize("name", TOP_K)
@pytest.mark.parametrize("top_k", [1, 3, 20])
def test_top_k_matches_torchmetrics(name, top_k):
    preds, target, indexes = documents(top_k)
    assert_same(*both(name, [(preds, target, indexes)], top_k=top_k))


@pytest.mark.parametrize("top_k", [None, 2, 15])
@pytest.mark.parametrize("adaptive_k", [False, True])
def test_precision_adaptive_k(top_k, adaptive_k):
    preds, target, indexes = documents(11, queries=60)
    assert_same(*both("RetrievalPrecision", [(preds, target, indexes)], top_k=top_k, adaptive_k=adaptive_k))


def _trimmed_mean(values, dim=None):
    return values.sort().values[1:-1].mean()


@pytest.mark.parametrize("name", ["RetrievalMAP", "RetrievalNormalizedDCG", "RetrievalFallOut"])
@pytest.mark.parametrize("aggregation", ["median", "min", "max", _trimmed_mean])
def test_aggregation_matches_torchmetrics(name, aggregation):
    preds, target, indexes = documents(5)
    assert_same(*both(name, [(preds, target, indexes)], aggregation=aggregation))


@pytest.mark.parametrize("name", ["RetrievalMAP", "RetrievalRecall", "RetrievalNormalizedDCG"])
def test_ignore_index_matches_torchmetrics(name):
    preds, target, indexes = documents(9)
    target = target.long()
    target[::7] = -100
    assert_same(*both(name, [(preds, target, indexes)], ignore_index=-100))


@pytest.mark.parametrize("name", NAMES)
def test_error_action_raises_like_torchmetrics(name):
    preds, target, indexes = documents(2)
    ours, theirs = both(name, [(preds, target, indexes)], empty_target_action="error")
    with pytest.raises(ValueError):
        theirs.compute()
    with pytest.raises(ValueError, match="empty_target_action='error'"):
        ours.compute()


def test_every_query_skipped_gives_zero():
    m = ttr.RetrievalMAP(empty_target_action="skip")
    m.update(torch.tensor([0.5, 0.2]), torch.tensor([False, False]), torch.tensor([4, 4]))
    assert m.compute().item() == 0.0


@pytest.mark.parametrize("ties", ["same", "any"])
def test_ndcg_graded_matches_torchmetrics_with_any_ties(ties):
    preds, target, indexes = documents(4, ties=ties, graded=True)
    for top_k in (None, 3):
        assert_same(*both("RetrievalNormalizedDCG", [(preds, target, indexes)], top_k=top_k))
    float_target = target.float() / 2
    assert_same(*both("RetrievalNormalizedDCG", [(preds, float_target, indexes)]))


def test_ndcg_matches_sklearn_with_ties():
    g = torch.Generator().manual_seed(3)
    preds = torch.randint(0, 4, (30,), generator=g).float()
    target = torch.randint(0, 5, (30,), generator=g)
    for k in (None, 5):
        expected = skm.ndcg_score(target[None].numpy(), preds[None].numpy(), k=k)
        got = ttf.retrieval_normalized_dcg(preds, target, top_k=k)
        assert got.item() == pytest.approx(expected, abs=1e-6)


def test_average_precision_matches_sklearn():
    g = torch.Generator().manual_seed(8)
    preds = torch.rand(50, generator=g) + 0.01  # positive, distinct: sklearn's and torchmetrics' AP agree
    target = torch.rand(50, generator=g) < 0.3
    expected = skm.average_precision_score(target.numpy(), preds.numpy())
    assert ttf.retrieval_average_precision(preds, target).item() == pytest.approx(expected, abs=1e-6)


FUNCTIONS = [
    ("retrieval_average_precision", {"top_k": 4}),
    ("retrieval_reciprocal_rank", {"top_k": 4}),
    ("retrieval_normalized_dcg", {"top_k": 4}),
    ("retrieval_precision", {"top_k": 30, "adaptive_k": True}),
    ("retrieval_precision", {"top_k": 30}),
    ("retrieval_recall", {"top_k": 4}),
    ("retrieval_hit_rate", {"top_k": 2}),
    ("retrieval_fall_out", {"top_k": 4}),
    ("retrieval_r_precision", {}),
]


@pytest.mark.parametrize("name,kwargs", FUNCTIONS)
@pytest.mark.parametrize("seed", range(4))
def test_functional_matches_torchmetrics(name, kwargs, seed):
    preds, target, _ = documents(seed, n=20)
    for k in ({}, kwargs):
        ours, theirs = getattr(ttf, name)(preds, target, **k), getattr(tmf, name)(preds, target, **k)
        assert ours.dtype == torch.float32
        torch.testing.assert_close(ours, theirs.float(), rtol=1e-5, atol=1e-6)


def test_functional_rejects_bad_input():
    with pytest.raises(ValueError, match="preds"):
        ttf.retrieval_average_precision(torch.tensor([1, 2]), torch.tensor([True, False]))
    with pytest.raises(ValueError, match="target"):
        ttf.retrieval_recall(torch.tensor([0.1, 0.2]), torch.tensor([2, 0]))
    with pytest.raises(ValueError, match="top_k"):
        ttf.retrieval_hit_rate(torch.tensor([0.1, 0.2]), torch.tensor([1, 0]), top_k=0)
    with pytest.raises(ValueError, match="preds"):
        ttf.retrieval_r_precision(torch.tensor([]), torch.tensor([]))


@pytest.mark.parametrize("name", NAMES)
def test_split_into_batches_does_not_change_the_result(name):
    """Ties in any order: one update, or many small ones of the same documents in the same order,
    give the identical value (documents keep their order in the state)."""
    preds, target, indexes = documents(6, ties="any", graded=name == "RetrievalNormalizedDCG")
    whole = getattr(ttr, name)()
    whole.update(preds, target, indexes)
    parts = getattr(ttr, name)()
    for i in range(0, 400, 37):
        parts.update(preds[i : i + 37], target[i : i + 37], indexes[i : i + 37])
    assert torch.equal(whole.compute(), parts.compute())


@pytest.mark.parametrize("name", NAMES)
def test_queries_complete_equals_documents(name):
    preds, target, indexes = documents(7, ties="any", graded=name == "RetrievalNormalizedDCG")
    order = torch.sort(indexes, stable=True).indices
    preds, target, indexes = preds[order], target[order], indexes[order]
    cut = int((indexes < 20).sum())  # two batches, each with whole queries
    for action in ("neg", "pos", "skip"):
        docs = getattr(ttr, name)(empty_target_action=action)
        sums = getattr(ttr, name)(empty_target_action=action, queries_complete=True)
        for part in (slice(0, cut), slice(cut, None)):
            docs.update(preds[part], target[part], indexes[part])
            sums.update(preds[part], target[part], indexes[part])
        torch.testing.assert_close(sums.compute(), docs.compute(), rtol=1e-6, atol=1e-7)
        assert sorted(sums.state_names) == ["num_empty", "num_queries", "value_sum"]
    with pytest.raises(ValueError, match="empty_target_action='error'"):
        getattr(ttr, name)(empty_target_action="error", queries_complete=True).update(preds, target, indexes).compute()


def test_queries_complete_needs_mean():
    with pytest.raises(ValueError, match="aggregation='mean'"):
        ttr.RetrievalMAP(aggregation="median", queries_complete=True)


def test_memory_follows_documents_not_query_ids():
    m = ttr.RetrievalMRR()
    m.update(torch.tensor([0.3, 0.9, 0.1]), torch.tensor([1, 0, 1]), torch.tensor([2**40, 2**40, -(2**50)]))
    assert m.compute().item() == pytest.approx(0.75)
    assert m.query.element_size() + m.score.element_size() + m.relevance.element_size() == 13


def test_collection_shares_the_documents():
    from torchtally import MetricCollection

    coll = MetricCollection(
        {"map": ttr.RetrievalMAP(), "mrr": ttr.RetrievalMRR(), "p": ttr.RetrievalPrecision(top_k=2)}
    )
    preds, target, indexes = documents(1)
    coll.update(preds, target, indexes)
    values = coll.compute()
    for key, name, kw in (
        ("map", "RetrievalMAP", {}),
        ("mrr", "RetrievalMRR", {}),
        ("p", "RetrievalPrecision", {"top_k": 2}),
    ):
        single = getattr(ttr, name)(**kw)
        single.update(preds, target, indexes)
        assert torch.equal(values[key], single.compute())


BAD = [
    ((torch.tensor([1, 2]), torch.tensor([1, 0]), torch.tensor([0, 0])), "preds"),
    ((torch.tensor([0.1, float("nan")]), torch.tensor([1, 0]), torch.tensor([0, 0])), "preds"),
    ((torch.tensor([0.1, 0.2]), torch.tensor([2, 0]), torch.tensor([0, 0])), "target"),
    ((torch.tensor([0.1, 0.2]), torch.tensor([1, 0, 1]), torch.tensor([0, 0])), "target"),
    ((torch.tensor([0.1, 0.2]), torch.tensor([1, 0]), torch.tensor([0.0, 0.0])), "indexes"),
    ((torch.tensor([0.1, 0.2]), torch.tensor([1, 0]), torch.tensor([0, 0, 1])), "indexes"),
    ((torch.tensor([0.1, 0.2]), torch.tensor([1, 0]), None), "indexes"),
]


@pytest.mark.parametrize("args,arg", BAD)
@pytest.mark.parametrize("queries_complete", [False, True])
def test_bad_input_leaves_state_unchanged(args, arg, queries_complete):
    m = ttr.RetrievalMAP(queries_complete=queries_complete)
    m.update(torch.tensor([0.5, 0.1]), torch.tensor([1, 0]), torch.tensor([7, 7]))
    assert_rejects(m, args, ValueError, arg)


def test_ndcg_rejects_negative_relevance():
    m = ttr.RetrievalNormalizedDCG()
    assert_rejects(m, (torch.tensor([0.1, 0.2]), torch.tensor([-1.0, 2.0]), torch.tensor([0, 0])), ValueError, "target")


@pytest.mark.parametrize("dtype", [torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64])
def test_integer_relevance_checked_by_its_extremes(dtype):
    """An integer target passes on its minimum and maximum alone: any value off range, anywhere
    in the batch, is still refused with the state untouched; 0/1 (any value >= 0 for NDCG) is kept."""
    preds, indexes = torch.rand(6), torch.tensor([0, 0, 0, 1, 1, 1])
    binary, graded = ttr.RetrievalMAP(), ttr.RetrievalNormalizedDCG()
    binary.update(preds, torch.tensor([0, 1, 0, 1, 1, 0], dtype=dtype), indexes)
    graded.update(preds, torch.tensor([0, 3, 0, 1, 7, 0], dtype=dtype), indexes)
    for bad in (2, 5) + ((-1,) if dtype.is_signed else ()):
        target = torch.tensor([0, 1, 0, 1, bad, 0], dtype=dtype)
        message = f"target: expected 0 or 1.*got {bad} at document 4"
        assert_rejects(binary, (preds, target, indexes), ValueError, message)
    if dtype.is_signed:
        target = torch.tensor([0, 3, -2, 1, 7, 0], dtype=dtype)
        assert_rejects(graded, (preds, target, indexes), ValueError, "target: expected a finite relevance >= 0, got -2")
    assert binary.relevance.tolist() == [False, True, False, True, True, False]
    assert graded.relevance.tolist() == [0.0, 3.0, 0.0, 1.0, 7.0, 0.0]


@pytest.mark.parametrize(
    "kwargs,arg",
    [
        ({"empty_target_action": "drop"}, "empty_target_action"),
        ({"ignore_index": 1.5}, "ignore_index"),
        ({"aggregation": "mode"}, "aggregation"),
        ({"top_k": 0}, "top_k"),
        ({"queries_complete": 1}, "queries_complete"),
    ],
)
def test_bad_options(kwargs, arg):
    with pytest.raises(ValueError, match=arg):
        ttr.RetrievalRecall(**kwargs)


def _torchmetrics_reference(name, kwargs):
    def reference(preds, target, indexes):
        m = getattr(tmr, name)(**kwargs)
        m.update(preds, target, indexes)
        return m.compute()

    return reference


def _lifecycle_cases():
    preds, target, indexes = documents(12)
    batches = [(preds[i : i + 45], target[i : i + 45], indexes[i : i + 45]) for i in range(0, 400, 45)]
    cases = []
    for name, kwargs in (("RetrievalMAP", {}), ("RetrievalNormalizedDCG", {"top_k": 5})):
        cases.append(
            MetricCase(
                name,
                functools.partial(getattr(ttr, name), **kwargs),
                batches=batches,
                reference=_torchmetrics_reference(name, kwargs),
                rtol=1e-5,
                atol=1e-6,
            )
        )
    return cases


@pytest.mark.parametrize("case", _lifecycle_cases(), ids=lambda c: c.name)
def test_lifecycle(case):
    check_metric(case)


def test_sklearn_mean_over_queries():
    """MAP over several queries (positive, distinct scores) is the mean of sklearn's APs."""
    g = torch.Generator().manual_seed(21)
    indexes = torch.randint(0, 6, (120,), generator=g)
    preds = torch.rand(120, generator=g) + 0.01
    target = torch.rand(120, generator=g) < 0.4
    aps = [skm.average_precision_score(target[indexes == q].numpy(), preds[indexes == q].numpy()) for q in range(6)]
    m = ttr.RetrievalMAP().update(preds, target, indexes)
    assert m.compute().item() == pytest.approx(float(np.mean(aps)), abs=1e-6)


@pytest.mark.parametrize("name", ["retrieval_average_precision", "retrieval_reciprocal_rank", "retrieval_auroc"])
def test_functional_top_k_zero_means_every_document_as_torchmetrics(name):
    preds, target = torch.tensor([0.3, 0.2, 0.1]), torch.tensor([0, 1, 1])
    ours = getattr(ttf, name)(preds, target, top_k=0)
    torch.testing.assert_close(ours, getattr(tmf, name)(preds, target, top_k=0))
    torch.testing.assert_close(ours, getattr(ttf, name)(preds, target))


def test_ignore_index_outside_the_targets_dtype_drops_nothing():
    preds, target, indexes = torch.tensor([0.3, 0.2, 0.1]), torch.tensor([0, 1, 1], dtype=torch.uint8), torch.zeros(3)
    plain, ignoring = ttr.RetrievalMAP(), ttr.RetrievalMAP(ignore_index=256)  # 256 as uint8 would be 0
    plain.update(preds, target, indexes.long())
    ignoring.update(preds, target, indexes.long())
    torch.testing.assert_close(ignoring.compute(), plain.compute())


def test_top_k_beyond_int64_is_refused_at_construction():
    with pytest.raises(ValueError, match="top_k"):
        ttr.RetrievalPrecision(top_k=2**63)


@pytest.mark.parametrize("name", ["RetrievalMAP", "RetrievalNormalizedDCG"])
def test_scores_that_require_grad_are_stored_outside_the_graph(name):
    preds = torch.rand(2, 5, requires_grad=True)
    target, indexes = torch.randint(0, 2, (2, 5), generator=torch.Generator().manual_seed(0)), torch.zeros(2, 5)
    m = getattr(ttr, name)()
    m.update(preds, target.float() if name == "RetrievalNormalizedDCG" else target, indexes.long())
    assert m.score.grad_fn is None and not m.score.requires_grad
    assert m.score.tolist() == preds.detach().reshape(-1).tolist()
