"""Retrieval curve metrics (RetrievalAUROC, RetrievalPrecisionRecallCurve,
RetrievalRecallAtFixedPrecision) and their functional forms against torchmetrics 1.9: values,
empty queries, aggregation, top_k / max_k / adaptive_k / max_fpr; queries_complete refused."""

import pytest
import torch
import torchmetrics.functional.retrieval as tmf
import torchmetrics.retrieval as tmr

import torchtally.functional.retrieval as ttf
import torchtally.retrieval as ttr


def documents(seed: int, n: int = 300, queries: int = 30, ties: bool = False):
    g = torch.Generator().manual_seed(seed)
    indexes = torch.randint(0, queries, (n,), generator=g)
    target = torch.randint(0, 2, (n,), generator=g).bool()
    target[indexes == 2] = False  # a query without a positive
    target[indexes == 4] = True  # one without a negative
    if ties:
        preds = torch.randint(-3, 5, (n,), generator=g).float() / 4
    else:
        preds = (torch.randperm(n, generator=g).float() - n / 4) / n
    return preds, target, indexes


def run(module, name, batches, **kwargs):
    m = getattr(module, name)(**kwargs)
    for b in batches:
        m.update(*b)
    return m.compute()


def assert_close(ours, theirs):
    if isinstance(theirs, tuple):
        assert len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            assert a.shape == b.shape
            torch.testing.assert_close(a.double(), b.double(), rtol=1e-5, atol=1e-6)
    else:
        torch.testing.assert_close(ours.double(), theirs.double(), rtol=1e-5, atol=1e-6)


CASES = [
    ("RetrievalAUROC", {}),
    ("RetrievalAUROC", {"top_k": 4}),
    ("RetrievalAUROC", {"max_fpr": 0.4}),
    ("RetrievalPrecisionRecallCurve", {}),
    ("RetrievalPrecisionRecallCurve", {"max_k": 5}),
    ("RetrievalPrecisionRecallCurve", {"max_k": 30, "adaptive_k": True}),
    ("RetrievalPrecisionRecallCurve", {"max_k": 6, "aggregation": "median"}),
    ("RetrievalRecallAtFixedPrecision", {"min_precision": 0.5, "max_k": 8}),
    ("RetrievalRecallAtFixedPrecision", {"min_precision": 0.9}),
]


@pytest.mark.parametrize("name,kwargs", CASES)
@pytest.mark.parametrize("action", ["neg", "pos", "skip"])
def test_matches_torchmetrics(name, kwargs, action):
    preds, target, indexes = documents(len(kwargs) + len(action))
    batches = [(preds[i : i + 64], target[i : i + 64], indexes[i : i + 64]) for i in range(0, 300, 64)]
    kwargs = {**kwargs, "empty_target_action": action}
    assert_close(run(ttr, name, batches, **kwargs), run(tmr, name, batches, **kwargs))


@pytest.mark.parametrize("kwargs", [{}, {"max_fpr": 0.3}, {"aggregation": "max"}])
def test_auroc_with_ties_matches_torchmetrics(kwargs):
    preds, target, indexes = documents(3, ties=True)
    batches = [(preds, target, indexes)]
    assert_close(run(ttr, "RetrievalAUROC", batches, **kwargs), run(tmr, "RetrievalAUROC", batches, **kwargs))


@pytest.mark.parametrize("name", ["RetrievalAUROC", "RetrievalPrecisionRecallCurve"])
def test_error_action(name):
    preds, target, indexes = documents(1)
    with pytest.raises(ValueError, match="empty_target_action='error'"):
        run(ttr, name, [(preds, target, indexes)], empty_target_action="error")


@pytest.mark.parametrize("name", ["RetrievalAUROC", "RetrievalPrecisionRecallCurve", "RetrievalRecallAtFixedPrecision"])
def test_queries_complete_refused(name):
    with pytest.raises(ValueError, match="queries_complete"):
        getattr(ttr, name)(queries_complete=True)


@pytest.mark.parametrize("seed", range(5))
def test_functional_matches_torchmetrics(seed):
    preds, target, _ = documents(seed, n=14)
    for kwargs in ({}, {"top_k": 5}, {"max_fpr": 0.5}):
        assert_close(ttf.retrieval_auroc(preds, target, **kwargs), tmf.retrieval_auroc(preds, target, **kwargs))
    for kwargs in ({}, {"max_k": 4}, {"max_k": 20, "adaptive_k": True}, {"max_k": 20}):
        ours = ttf.retrieval_precision_recall_curve(preds, target, **kwargs)
        theirs = tmf.retrieval_precision_recall_curve(preds, target, **kwargs)
        assert_close(ours, theirs)
        assert ours[2].dtype == theirs[2].dtype


def test_bad_options():
    with pytest.raises(ValueError, match="max_fpr"):
        ttr.RetrievalAUROC(max_fpr=1.5)
    with pytest.raises(ValueError, match="max_k"):
        ttr.RetrievalPrecisionRecallCurve(max_k=0)
    with pytest.raises(ValueError, match="min_precision"):
        ttr.RetrievalRecallAtFixedPrecision(min_precision=2.0)
