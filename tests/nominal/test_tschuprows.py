"""TschuprowsT / tschuprows_t / tschuprows_t_matrix against scipy (association, Bergsma's
correction) and torchmetrics, in one process and on 3 gloo ranks; edge cases and bad input."""

import functools
import warnings

import pytest
import torch
import torchmetrics.functional.nominal as tmf
import torchmetrics.nominal as tm
from support.metric_tester import MetricCase, assert_rejects, check_metric, run_distributed_cases
from support.nominal_cases import C, batches, series, table, tschuprows_t_ref
from support.parity_tester import ParityCase, check_parity

from torchtally.functional.nominal import tschuprows_t, tschuprows_t_matrix
from torchtally.nominal import TschuprowsT

P = functools.partial
PREDS, TARGET = series(21)
SCORES = torch.randn(PREDS.shape[0], C, generator=torch.Generator().manual_seed(22))

CASES = [
    MetricCase("bias", P(TschuprowsT, C), batches(PREDS, TARGET), tschuprows_t_ref, rtol=1e-6, atol=1e-7),
    MetricCase(
        "no_bias",
        P(TschuprowsT, C, bias_correction=False),
        batches(PREDS, TARGET),
        lambda p, t: tschuprows_t_ref(p, t, False),
        rtol=1e-6,
        atol=1e-7,
    ),
    MetricCase(
        "scores", P(TschuprowsT, C), batches(SCORES, TARGET), lambda s, t: tschuprows_t_ref(s.argmax(1), t), rtol=1e-6
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_lifecycle(case):
    check_metric(case)


@pytest.mark.distributed
def test_distributed():
    run_distributed_cases(CASES, world_size=3)


@pytest.mark.parametrize("bias", [True, False])
def test_parity_with_torchmetrics(bias):
    case = ParityCase(
        "t", P(TschuprowsT, C, bias), P(tm.TschuprowsT, C, bias), batches(PREDS, TARGET), rtol=1e-5, atol=1e-6
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_parity(case)


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("seed", range(6))
def test_functional_equals_scipy_and_torchmetrics(seed, bias):
    p, t = series(30 + seed, n=25 + 41 * seed, classes=2 + seed % 4, noise=0.2 + 0.12 * seed)
    got = tschuprows_t(p, t, bias)
    assert got.item() == pytest.approx(tschuprows_t_ref(p, t, bias), abs=1e-6)
    if not (bias and table(p, t).shape == (2, 2)):  # torchmetrics' Yates step raises on int64 tables
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert torch.allclose(got, tmf.tschuprows_t(p, t, bias), atol=1e-6, equal_nan=True)


def test_matrix():
    m = torch.stack([series(s)[i] for s in range(2) for i in range(2)], 1)
    got = tschuprows_t_matrix(m, bias_correction=False)
    assert torch.allclose(got, tmf.tschuprows_t_matrix(m, bias_correction=False), atol=1e-6)
    assert got[0, 1].item() == pytest.approx(tschuprows_t_ref(m[:, 0], m[:, 1], False), abs=1e-6)


def test_undefined_is_nan_with_a_warning():
    for bias in (True, False):
        with pytest.warns(UserWarning):
            assert torch.isnan(tschuprows_t(torch.zeros(6, dtype=torch.long), torch.arange(6) % 2, bias))
    with pytest.warns(UserWarning):  # as many categories as samples: the corrected size is 1
        assert torch.isnan(tschuprows_t(torch.arange(4), torch.tensor([0, 1, 0, 1])))


def test_bad_input_raises_and_leaves_the_state_unchanged():
    m = TschuprowsT(C).update(PREDS[:10], TARGET[:10])
    assert_rejects(m, (torch.tensor([0, 1]), torch.tensor([C, 1])), ValueError, "")
    assert_rejects(m, (torch.tensor([0.25]), torch.tensor([1])), ValueError, "preds: expected whole-number")
    with pytest.raises(TypeError, match="bias_correction"):
        TschuprowsT(C, bias_correction=None)
