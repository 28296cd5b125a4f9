"""TheilsU / theils_u / theils_u_matrix against scikit-learn's mutual information over scipy's
entropy and torchmetrics, in one process and on 3 gloo ranks; asymmetry, edge cases, bad input."""

import functools

import pytest
import torch
import torchmetrics.functional.nominal as tmf
import torchmetrics.nominal as tm
from support.metric_tester import MetricCase, assert_rejects, check_metric, run_distributed_cases
from support.nominal_cases import C, batches, series, theils_u_ref
from support.parity_tester import ParityCase, check_parity

from torchtally.functional.nominal import theils_u, theils_u_matrix
from torchtally.nominal import TheilsU

P = functools.partial
PREDS, TARGET = series(61)
SCORES = torch.randn(PREDS.shape[0], C, generator=torch.Generator().manual_seed(62))

CASES = [
    MetricCase("labels", P(TheilsU, C), batches(PREDS, TARGET), theils_u_ref, rtol=1e-6, atol=1e-7),
    MetricCase("swapped", P(TheilsU, C), batches(TARGET, PREDS), theils_u_ref, rtol=1e-6, atol=1e-7),
    MetricCase(
        "score_target", P(TheilsU, C), batches(PREDS, SCORES), lambda p, s: theils_u_ref(p, s.argmax(1)), rtol=1e-6
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_lifecycle(case):
    check_metric(case)


@pytest.mark.distributed
def test_distributed():
    run_distributed_cases(CASES, world_size=3)


def test_parity_with_torchmetrics():
    check_parity(ParityCase("u", P(TheilsU, C), P(tm.TheilsU, C), batches(PREDS, TARGET)))


@pytest.mark.parametrize("seed", range(6))
def test_functional_equals_sklearn_and_torchmetrics(seed):
    p, t = series(70 + seed, n=20 + 45 * seed, classes=2 + seed % 4, noise=0.25 + 0.1 * seed)
    for a, b in ((p, t), (t, p)):
        got = theils_u(a, b)
        assert got.item() == pytest.approx(theils_u_ref(a, b), abs=1e-6)
        assert torch.allclose(got, tmf.theils_u(a, b), atol=1e-6)


def test_matrix_is_asymmetric_as_torchmetrics():
    m = torch.stack([series(s)[i] for s in range(2) for i in range(2)], 1)
    got = theils_u_matrix(m)
    assert torch.allclose(got, tmf.theils_u_matrix(m), atol=1e-6)
    assert got[0, 1].item() == pytest.approx(theils_u_ref(m[:, 0], m[:, 1]), abs=1e-6)
    assert got[1, 0].item() == pytest.approx(theils_u_ref(m[:, 1], m[:, 0]), abs=1e-6)


def test_constant_preds_give_a_float_zero():
    got = TheilsU(3).update(torch.zeros(6, dtype=torch.long), torch.arange(6) % 3).compute()
    assert got.dtype == torch.float32 and got.item() == 0.0
    assert theils_u(torch.zeros(4), torch.arange(4)).item() == 0.0
    assert theils_u(torch.arange(4), torch.arange(4)).item() == pytest.approx(1.0)


def test_bad_input_raises_and_leaves_the_state_unchanged():
    m = TheilsU(C).update(PREDS[:10], TARGET[:10])
    assert_rejects(m, (torch.tensor([0, 7]), torch.tensor([0, 1])), ValueError, "")
    assert_rejects(m, (torch.tensor([[[0]]]), torch.tensor([0])), ValueError, "preds: expected")
