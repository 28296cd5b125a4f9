"""The retrieval kernels (retrieval_order, retrieval_scores): the C core against the torch
reference (the oracle) on random documents with ties, every metric, top_k and adaptive_k; bad
calls on both paths raise naming the argument and leave the outputs untouched."""

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from support.kernel_inputs import generator, kernels

from torchtally.kernels import reference
from torchtally.kernels.retrieval import METRICS


def _documents(seed, n, queries, levels, graded):
    g = generator(seed)
    query = torch.randint(-3, queries, (n,), generator=g) * 1000003  # sparse, negative ids too
    preds = (torch.randint(0, levels, (n,), generator=g).float() - levels / 3) / levels  # ties, <= 0
    if n:
        preds[0] = -0.0
    target = torch.randint(0, 4 if graded else 2, (n,), generator=g)
    return query, preds, target.float() if graded else target.bool()


def _order(impl, query, preds, target):
    n = query.shape[0]
    out = (torch.empty(n, dtype=torch.int64), torch.empty(n), torch.empty(n))
    impl.retrieval_order(*out, query, preds, target)
    return out


@settings(max_examples=40, deadline=None)
@given(
    n=st.integers(0, 300), queries=st.integers(1, 12), levels=st.sampled_from([2, 5, 1000]), seed=st.integers(0, 2**16)
)
def test_c_matches_reference(n, queries, levels, seed):
    c = kernels("c")
    for metric, name in enumerate(METRICS):
        query, preds, target = _documents(seed, n, queries, levels, name == "ndcg")
        ordered_c, ordered_r = _order(c, query, preds, target), _order(reference, query, preds, target)
        for a, b in zip(ordered_c, ordered_r):
            assert torch.equal(a, b)
        q, s, r = ordered_c
        groups = int(torch.unique(q).numel())
        for top_k in (0, 1, 3, 50):
            for adaptive_k in (False, True):
                a = torch.empty(groups, 2, dtype=torch.float64)
                b = torch.empty(groups, 2, dtype=torch.float64)
                c.retrieval_scores(a, q, s, r, metric, top_k, adaptive_k)
                reference.retrieval_scores(b, q, s, r, metric, top_k, adaptive_k)
                torch.testing.assert_close(a, b, rtol=1e-12, atol=1e-12, msg=f"{name} top_k={top_k}")


@pytest.mark.parametrize("backend", ["c", "reference"])
def test_order_is_exact_and_breaks_ties_by_relevance(backend):
    k = kernels(backend)
    query = torch.tensor([5, -2, 5, 5, -2, 2**62, 5, 5])
    preds = torch.tensor([0.5, 1.0, 0.5, 2.0, -0.0, float("inf"), 0.0, 0.5])
    target = torch.tensor([1, 0, 0, 1, 1, 1, 0, 2])
    q, s, r = _order(k, query, preds, target)
    assert q.tolist() == [-2, -2, 5, 5, 5, 5, 5, 2**62]
    assert s.tolist() == [1.0, 0.0, 2.0, 0.5, 0.5, 0.5, 0.0, float("inf")]
    assert r.tolist() == [0, 1, 1, 0, 1, 2, 0, 1]  # the tied 0.5 scores: least relevant first


def test_order_does_not_depend_on_where_the_documents_were_stored():
    c = kernels("c")
    g = torch.Generator().manual_seed(3)
    query = torch.randint(0, 20, (400,), generator=g)
    preds = torch.randint(0, 4, (400,), generator=g).float()  # many ties
    target = torch.randint(0, 2, (400,), generator=g)
    first = _order(c, query, preds, target)
    perm = torch.randperm(400, generator=g)
    second = _order(c, query[perm], preds[perm], target[perm])
    for a, b in zip(first, second):
        assert torch.equal(a, b)


def _scores_args(n=4):
    return (
        torch.zeros(2, 2, dtype=torch.float64),
        torch.tensor([0, 0, 1, 1][:n]),
        torch.tensor([0.9, 0.1, 0.5, 0.2][:n]),
        torch.tensor([1.0, 0.0, 1.0, 0.0][:n]),
        0,
        0,
        False,
    )


BAD_SCORES = [
    (0, torch.zeros(3, 2, dtype=torch.float64), ValueError, "out"),
    (0, torch.zeros(2, 2, dtype=torch.float32), TypeError, "out"),
    (1, torch.tensor([0, 0, 1, 1], dtype=torch.int32), TypeError, "query"),
    (1, torch.tensor([1, 1, 0, 0]), ValueError, "query"),
    (2, torch.tensor([0.1, 0.9, 0.5, 0.2]), ValueError, "preds"),
    (2, torch.tensor([0.9, float("nan"), 0.5, 0.2]), ValueError, "preds"),
    (2, torch.tensor([1, 0, 1, 0]), TypeError, "preds"),
    (3, torch.tensor([2.0, 0.0, 1.0, 0.0]), ValueError, "target"),
    (3, torch.tensor([-1.0, 0.0, 1.0, 0.0]), ValueError, "target"),
    (3, torch.tensor([1.0, 0.0, 1.0]), ValueError, "target"),
    (4, 8, ValueError, "metric"),
    (5, -1, ValueError, "top_k"),
]


@pytest.mark.parametrize("position,value,exc,arg", BAD_SCORES)
def test_scores_bad_input(impl, position, value, exc, arg):
    args = list(_scores_args())
    args[position] = value
    out = args[0]
    before = out.clone()
    with pytest.raises(exc, match=arg):
        impl.retrieval_scores(*args)
    assert torch.equal(out, before)


def test_ndcg_takes_graded_relevance(impl):
    args = list(_scores_args())
    args[3] = torch.tensor([3.0, 0.0, 0.5, 2.0])
    args[4] = METRICS.index("ndcg")
    impl.retrieval_scores(*args)
    assert args[0][1, 0] < 1.0 and args[0][0, 0] == 1.0


@pytest.mark.parametrize(
    "position,value,exc,arg",
    [
        (3, torch.tensor([0, 1], dtype=torch.int32), TypeError, "query"),
        (4, torch.tensor([0.5, 0.1], dtype=torch.float64), TypeError, "preds"),
        (4, torch.tensor([0.5, float("nan")]), ValueError, "preds"),
        (5, torch.tensor([1, 0, 1]), ValueError, "target"),
        (0, torch.empty(3, dtype=torch.int64), ValueError, "query_out"),
        (1, torch.empty(2, dtype=torch.float64), TypeError, "score_out"),
    ],
)
def test_order_bad_input(impl, position, value, exc, arg):
    args = [
        torch.full((2,), 7, dtype=torch.int64),
        torch.full((2,), 7.0),
        torch.full((2,), 7.0),
        torch.tensor([0, 1]),
        torch.tensor([0.5, 0.1]),
        torch.tensor([1, 0]),
    ]
    args[position] = value
    outs = [a.clone() for a in args[:3]]
    with pytest.raises(exc, match=arg):
        impl.retrieval_order(*args)
    for a, b in zip(args[:3], outs):
        if a.shape == b.shape and a.dtype == b.dtype:
            assert torch.equal(a, b)
