"""PearsonsContingencyCoefficient / pearsons_contingency_coefficient(_matrix) against scipy's
association and torchmetrics, in one process and on 3 gloo ranks; edge cases and bad input."""

import functools
import warnings

import pytest
import torch
import torchmetrics.functional.nominal as tmf
import torchmetrics.nominal as tm
from support.metric_tester import MetricCase, assert_rejects, check_metric, run_distributed_cases
from support.nominal_cases import C, batches, pearsons_ref, series
from support.parity_tester import ParityCase, check_parity

from torchtally.functional.nominal import pearsons_contingency_coefficient, pearsons_contingency_coefficient_matrix
from torchtally.nominal import PearsonsContingencyCoefficient

P = functools.partial
PREDS, TARGET = series(41)
F_PREDS = PREDS.float().masked_fill(torch.arange(PREDS.shape[0]) % 9 == 2, float("nan"))

CASES = [
    MetricCase("labels", P(PearsonsContingencyCoefficient, C), batches(PREDS, TARGET), pearsons_ref, rtol=1e-6),
    MetricCase(
        "nan_replace",
        P(PearsonsContingencyCoefficient, C, nan_replace_value=1),
        batches(F_PREDS, TARGET),
        lambda p, t: pearsons_ref(torch.nan_to_num(p, nan=1.0), t),
        rtol=1e-6,
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_lifecycle(case):
    check_metric(case)


@pytest.mark.distributed
def test_distributed():
    run_distributed_cases(CASES, world_size=3)


def test_parity_with_torchmetrics():
    check_parity(
        ParityCase(
            "p", P(PearsonsContingencyCoefficient, C), P(tm.PearsonsContingencyCoefficient, C), batches(PREDS, TARGET)
        )
    )


@pytest.mark.parametrize("seed", range(6))
def test_functional_equals_scipy_and_torchmetrics(seed):
    p, t = series(50 + seed, n=20 + 45 * seed, classes=2 + seed % 4, noise=0.25 + 0.1 * seed)
    got = pearsons_contingency_coefficient(p, t)
    assert got.item() == pytest.approx(pearsons_ref(p, t), abs=1e-6)
    assert torch.allclose(got, tmf.pearsons_contingency_coefficient(p, t), atol=1e-6)


def test_matrix():
    m = torch.stack([series(s)[i] for s in range(2) for i in range(2)], 1)
    got = pearsons_contingency_coefficient_matrix(m)
    assert torch.allclose(got, tmf.pearsons_contingency_coefficient_matrix(m), atol=1e-6)


def test_edge_cases():
    assert pearsons_contingency_coefficient(torch.zeros(5), torch.arange(5)).item() == 0.0  # one category
    with pytest.warns(UserWarning):
        assert torch.isnan(pearsons_contingency_coefficient(torch.zeros(0), torch.zeros(0)))
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        assert torch.isnan(PearsonsContingencyCoefficient(3).compute())


def test_bad_input_raises_and_leaves_the_state_unchanged():
    m = PearsonsContingencyCoefficient(C).update(PREDS[:10], TARGET[:10])
    assert_rejects(m, (torch.tensor([0, 1]), torch.tensor([0, 1, 1])), ValueError, "target: expected 2 samples")
    assert_rejects(m, (torch.tensor([-1]), torch.tensor([0])), ValueError, "")
    dropping = PearsonsContingencyCoefficient(C, nan_strategy="drop")
    dropping.update(torch.tensor([float("nan"), 1.0]), torch.tensor([0, 1]))  # the NaN pair is dropped
    assert int(dropping.confmat.sum()) == 1
