"""MultilabelCoverageError, MultilabelRankingAveragePrecision, MultilabelRankingLoss and their
functional forms, against scikit-learn (exact, ties included) and torchmetrics: the shared
tester (one process and 3 gloo ranks, the three sharing one state in a collection), ties,
rows with no or only relevant labels, logits, ignore_index, and bad input (state unchanged)."""

import functools

import pytest
import sklearn.metrics as skm
import torch
import torchmetrics.functional.classification as tmf
from support.metric_tester import CollectionFactory, MetricCase, assert_rejects, check_metric, run_distributed_cases

from torchtally import MetricCollection
from torchtally.classification import MultilabelCoverageError, MultilabelRankingAveragePrecision, MultilabelRankingLoss
from torchtally.functional import (
    multilabel_coverage_error,
    multilabel_ranking_average_precision,
    multilabel_ranking_loss,
)

P = functools.partial
G = torch.Generator().manual_seed(5)
N, L = 43, 5
PREDS = torch.randint(0, 5, (N, L), generator=G).float() / 4  # many ties
TARGET = torch.randint(0, 2, (N, L), generator=G)
TARGET[0], TARGET[1] = 0, 1  # no relevant label, every label relevant
SK = {"coverage": skm.coverage_error, "lrap": skm.label_ranking_average_precision_score, "loss": skm.label_ranking_loss}


def _split(*tensors, sizes=(7, 12, 1, 11, 12)):
    out, start = [], 0
    for s in sizes:
        out.append(tuple(t[start : start + s] for t in tensors))
        start += s
    return out


def _sk_all(p, t):
    return {name: fn(t.numpy(), p.double().numpy()) for name, fn in SK.items()}


CASES = [
    MetricCase(
        "all_three_shared",
        CollectionFactory(
            coverage=P(MultilabelCoverageError, L),
            lrap=P(MultilabelRankingAveragePrecision, L),
            loss=P(MultilabelRankingLoss, L),
        ),
        _split(PREDS, TARGET),
        _sk_all,
        rtol=1e-6,
    ),
    MetricCase(
        "lrap_random_scores",
        P(MultilabelRankingAveragePrecision, L),
        _split(torch.rand(N, L, generator=G), TARGET),
        lambda p, t: SK["lrap"](t.numpy(), p.double().numpy()),
        rtol=1e-6,
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_lifecycle(case):
    check_metric(case)


@pytest.mark.distributed
def test_distributed():
    run_distributed_cases(CASES)


def test_collection_shares_one_state():
    c = MetricCollection([MultilabelCoverageError(L), MultilabelRankingLoss(L), MultilabelRankingAveragePrecision(L)])
    c.update(PREDS, TARGET)
    assert len(c.compute_groups) == 1


@pytest.mark.parametrize("ignore_index", [None, -1])
def test_functional_forms_match_torchmetrics_and_sklearn(ignore_index):
    logits = torch.randn(9, L, 2, generator=G) * 3  # logits get sigmoid; [N, L, extra]
    target = torch.randint(0, 2, (9, L, 2), generator=G)
    if ignore_index is not None:
        target[0, 1, 0] = target[4, 3, 1] = ignore_index
    for ours, theirs in (
        (multilabel_coverage_error, tmf.multilabel_coverage_error),
        (multilabel_ranking_average_precision, tmf.multilabel_ranking_average_precision),
        (multilabel_ranking_loss, tmf.multilabel_ranking_loss),
    ):
        a, b = ours(logits, target, L, ignore_index), theirs(logits, target, L, ignore_index)
        torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-6)
        assert a.dtype == b.dtype == torch.float32
    p, t = PREDS, TARGET  # ties: scikit-learn's rule
    for name, fn in (
        ("coverage", multilabel_coverage_error),
        ("lrap", multilabel_ranking_average_precision),
        ("loss", multilabel_ranking_loss),
    ):
        assert float(fn(p, t, L)) == pytest.approx(SK[name](t.numpy(), p.numpy()), rel=1e-6)


def test_bad_input_leaves_state_unchanged():
    m = MultilabelRankingLoss(L)
    m.update(PREDS[:4], TARGET[:4])
    bad_target = TARGET[:3].clone()
    bad_target[1, 2] = 2
    assert_rejects(m, (PREDS[:3], bad_target), ValueError, "target")
    nan = PREDS[:3].clone()
    nan[2, 4] = float("nan")
    assert_rejects(m, (nan, TARGET[:3]), ValueError, "NaN")
    assert_rejects(m, (PREDS[:3, :4], TARGET[:3, :4]), ValueError, "preds")
    assert_rejects(m, (PREDS[:3], TARGET[:2]), ValueError, "target")
    assert_rejects(m, (TARGET[:3], TARGET[:3]), TypeError, "preds")
    with pytest.raises(ValueError, match="num_labels"):
        MultilabelCoverageError(1)
