"""FleissKappa / fleiss_kappa against Fleiss' formula in numpy and torchmetrics, in one process
and on 3 gloo ranks; its state (sums, not samples), probs mode, edge cases and bad input."""

import functools
import warnings

import pytest
import torch
import torchmetrics.functional.nominal as tmf
import torchmetrics.nominal as tm
from support.metric_tester import MetricCase, assert_rejects, check_metric, run_distributed_cases
from support.nominal_cases import batches, fleiss_ref, ratings
from support.parity_tester import ParityCase, check_parity

from torchtally.functional.nominal import fleiss_kappa
from torchtally.nominal import FleissKappa

P = functools.partial
COUNTS = ratings(81)
PROBS = torch.randn(COUNTS.shape[0], 3, 7, generator=torch.Generator().manual_seed(82)).softmax(1)


def probs_ref(scores):
    choice = scores.argmax(1)
    counts = torch.zeros(scores.shape[0], scores.shape[1], dtype=torch.long)
    return fleiss_ref(counts.scatter_add_(1, choice, torch.ones_like(choice)))


CASES = [
    MetricCase("counts", FleissKappa, batches(COUNTS), fleiss_ref, rtol=1e-9, atol=1e-7),
    MetricCase("probs", P(FleissKappa, mode="probs"), batches(PROBS), probs_ref, rtol=1e-9, atol=1e-7),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_lifecycle(case):
    check_metric(case)


@pytest.mark.distributed
def test_distributed():
    run_distributed_cases(CASES, world_size=3)


@pytest.mark.parametrize("mode, data", [("counts", COUNTS), ("probs", PROBS)])
def test_parity_with_torchmetrics(mode, data):
    # torchmetrics adds 1e-5 to the denominator: within 2e-5 of the exact value here
    check_parity(ParityCase(mode, P(FleissKappa, mode), P(tm.FleissKappa, mode), batches(data), rtol=0, atol=2e-5))


@pytest.mark.parametrize("seed", range(5))
def test_functional_equals_the_formula_and_torchmetrics(seed):
    counts = ratings(90 + seed, n=10 + 30 * seed, categories=2 + seed, raters=2 + 2 * seed)
    got = fleiss_kappa(counts)
    assert got.dtype == torch.float32
    assert got.item() == pytest.approx(fleiss_ref(counts), abs=1e-6)
    assert torch.allclose(got, tmf.fleiss_kappa(counts), atol=2e-5)


def test_state_is_sums_whatever_the_number_of_samples():
    m = FleissKappa()
    for batch in batches(COUNTS):
        m.update(*batch)
    assert m.category_totals.shape == (COUNTS.shape[1],)
    assert torch.equal(m.category_totals, COUNTS.sum(0))
    assert m.sums.tolist() == [COUNTS.shape[0], int((COUNTS**2).sum())]


def test_probs_mode_with_fewer_raters_than_categories():
    scores = torch.randn(40, 6, 3, generator=torch.Generator().manual_seed(5))
    assert fleiss_kappa(scores, mode="probs").item() == pytest.approx(probs_ref(scores), abs=1e-6)


def test_undefined_values_are_nan_with_a_warning():
    with pytest.warns(UserWarning, match="one category"):
        assert torch.isnan(fleiss_kappa(torch.tensor([[3, 0], [3, 0]])))
    with pytest.warns(UserWarning, match="at least 2"):
        assert torch.isnan(fleiss_kappa(torch.tensor([[1, 0], [0, 1]])))
    with pytest.warns(UserWarning, match="without samples"):
        assert torch.isnan(fleiss_kappa(torch.zeros(0, 3, dtype=torch.long)))
    assert fleiss_kappa(torch.tensor([[2, 0], [0, 2]])).item() == 1.0


def test_bad_input_raises_and_leaves_the_state_unchanged():
    m = FleissKappa().update(COUNTS[:10])
    assert_rejects(m, (torch.tensor([[2, 1], [1, 1]]),), ValueError, "same number of ratings")
    assert_rejects(m, (torch.tensor([[6, 0, 0]]),), ValueError, "expected 4 categories and 6 raters")
    assert_rejects(m, (torch.tensor([[7, -1, 0, 0]]),), ValueError, "counts >= 0")
    assert_rejects(m, (COUNTS[:4].float(),), ValueError, "mode='counts'")
    assert_rejects(m, ([[1, 2]],), TypeError, "ratings")
    p = FleissKappa("probs").update(PROBS[:5])
    assert_rejects(p, (PROBS[:3].clone().fill_(float("nan")),), ValueError, "NaN")
    assert_rejects(p, (COUNTS[:3],), ValueError, "mode='probs'")
    with pytest.raises(ValueError, match="mode"):
        FleissKappa("votes")


def test_ranks_with_different_raters_raise_at_compute():
    a, b = FleissKappa().update(COUNTS[:5]), FleissKappa().update(torch.tensor([[1, 1, 0, 0]]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a.merge_state(b)
    with pytest.raises(ValueError, match="different numbers of raters"):
        a.compute()


def test_forward_keeps_the_state_at_c_values_and_the_epoch_value():
    data = [ratings(seed, 40, 4, 6) for seed in range(7)]
    metric, reference = FleissKappa(), FleissKappa()
    for batch in data:
        step = metric(batch)  # forward: the batch's value, the batch folded into the epoch's state
        assert metric.category_totals.shape == (4,)  # a "cat" state grew by C per forward
        torch.testing.assert_close(step, FleissKappa().update(batch).compute())
        reference.update(batch)
    assert torch.equal(metric.category_totals, reference.category_totals)
    assert torch.equal(metric.compute(), reference.compute())


def test_merge_of_metrics_with_different_categories_raises():
    a, b = FleissKappa(), FleissKappa()
    a.update(torch.tensor([[2, 1], [3, 0]]))
    b.update(torch.tensor([[2, 1, 0], [3, 0, 0]]))
    with pytest.raises(ValueError, match="categories"):
        a.merge_state(b)
