"""Regression metrics against scikit-learn / scipy / numpy, edge cases and bad input. Every
configuration in CASES (support/regression_cases.py) also runs through the shared tester
(support.metric_tester); their 3-rank distributed check is in
tests/distributed/test_regression_aggregation.py. Parity with torchmetrics over the argument
grid (values, dtypes, shapes, signatures) is in test_regression_aggregation_parity.py."""

import functools
import warnings

import numpy as np
import pytest
import scipy.stats
import sklearn.metrics as skm
import torch
import torchmetrics
from support.doctests import package_doctests
from support.metric_tester import assert_rejects, check_metric
from support.regression_cases import (
    BIG,
    BIG3,
    CASES,
    F64,
    ONE,
    POSITIVE,
    THREE,
    adjusted_r2_ref,
    cosine_ref,
    np64,
    pearson_ref,
    sk,
    split,
)

from torchtally import MetricCollection, NotComputableError, kernels
from torchtally.functional import (
    cosine_similarity,
    explained_variance,
    mean_absolute_error,
    mean_absolute_percentage_error,
    mean_squared_error,
    pearson_corrcoef,
    r2_score,
)
from torchtally.functional.regression.update import InputShapeError
from torchtally.regression import (
    CosineSimilarity,
    ExplainedVariance,
    MeanAbsoluteError,
    MeanAbsolutePercentageError,
    MeanSquaredError,
    PearsonCorrCoef,
    R2Score,
)

P = functools.partial


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_lifecycle_and_reference(case):
    check_metric(case)


def test_offsets_need_the_moments_state():
    """Mean 1e6, spread 1: a sum-of-squares state (as torchmetrics keeps, even in float64) is off
    by about 1e-5 in R2; the merged moments stay within 1e-10 of the exact value."""
    preds, target = BIG
    exact = skm.r2_score(*np64(target, preds))  # two-pass in float64: exact here to ~1e-16
    t = target.double()
    naive_ss_tot = (t * t).sum() - t.sum() ** 2 / t.numel()
    naive = 1 - ((t - preds) ** 2).sum() / naive_ss_tot
    theirs = torchmetrics.R2Score()
    ours = R2Score()
    for batch in split(preds, target):
        ours.update(*batch)
        if batch[0].numel():
            theirs.update(*batch)
    assert abs(float(naive) - exact) > 1e-6
    assert abs(float(theirs.compute()) - exact) > 1e-6
    assert abs(float(ours.compute()) - exact) < 1e-10


# -- functional forms --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "ours, reference, data",
    [
        (P(mean_squared_error), sk(skm.mean_squared_error), ONE),
        (
            P(mean_squared_error, squared=False, num_outputs=3),
            sk(skm.root_mean_squared_error, multioutput="raw_values"),
            THREE,
        ),
        (P(mean_absolute_error, num_outputs=3), sk(skm.mean_absolute_error, multioutput="raw_values"), THREE),
        (mean_absolute_percentage_error, sk(skm.mean_absolute_percentage_error), POSITIVE),
        (P(r2_score, multioutput="raw_values"), sk(skm.r2_score, multioutput="raw_values"), BIG3),
        (P(r2_score, multioutput="variance_weighted"), sk(skm.r2_score, multioutput="variance_weighted"), THREE),
        (P(r2_score, adjusted=2), adjusted_r2_ref(2), ONE),
        (
            P(explained_variance, multioutput="raw_values"),
            sk(skm.explained_variance_score, multioutput="raw_values"),
            THREE,
        ),
        (pearson_corrcoef, pearson_ref, BIG3),
    ],
)
def test_functional_against_reference(ours, reference, data):
    got = ours(*data)
    assert got.dtype == torch.float64  # the inputs' dtype, as torchmetrics' functional forms
    np.testing.assert_allclose(got.numpy(), reference(*data), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("reduction", ["sum", "mean", "none", None])
def test_cosine_functional_is_float32_as_torchmetrics(reduction):
    got = cosine_similarity(*THREE, reduction=reduction)
    assert got.dtype == torch.float32
    np.testing.assert_allclose(got.numpy(), cosine_ref(reduction or "none")(*THREE), rtol=1e-6)


# -- edge cases ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "factory",
    [
        MeanSquaredError,
        MeanAbsoluteError,
        MeanAbsolutePercentageError,
        ExplainedVariance,
        P(MeanSquaredError, num_outputs=3),
    ],
)
def test_means_over_no_samples_are_nan(factory):
    metric = factory().update(
        torch.empty(0, 3) if "num_outputs" in str(factory) else torch.empty(0),
        torch.empty(0, 3) if "num_outputs" in str(factory) else torch.empty(0),
    )
    assert torch.isnan(metric.compute()).all()


def test_r2_needs_two_samples_and_cosine_a_row():
    with pytest.raises(ValueError, match="Needs at least two samples"):
        R2Score().update(torch.empty(0), torch.empty(0)).compute()
    with pytest.raises(ValueError, match="Needs at least two samples"):
        R2Score().update(torch.tensor([1.0]), torch.tensor([2.0])).compute()
    assert (
        R2Score()
        .update(torch.tensor([1.0]), torch.tensor([2.0]))
        .update(torch.tensor([3.0]), torch.tensor([2.5]))
        .compute()
    )
    for reduction in ("sum", "mean", "none"):
        with pytest.raises(ValueError, match="no rows"):
            CosineSimilarity(reduction=reduction).update(torch.empty(0, 3), torch.empty(0, 3)).compute()


def test_pearson_over_too_few_samples_is_nan_with_a_warning():
    with pytest.warns(UserWarning, match="zero variance"):
        assert torch.isnan(PearsonCorrCoef().update(torch.empty(0), torch.empty(0)).compute())
    with pytest.warns(UserWarning, match="zero variance"):
        assert torch.isnan(PearsonCorrCoef(num_outputs=2).update(torch.ones(1, 2), torch.ones(1, 2)).compute()).all()


def test_constant_target_follows_sklearn():
    target = torch.full((6,), 2.0)
    noisy = torch.tensor([1.0, 2.0, 3.0, 2.0, 2.5, 1.5])
    for preds, want in ((target.clone(), 1.0), (noisy, 0.0)):
        for metric, ref in ((R2Score, skm.r2_score), (ExplainedVariance, skm.explained_variance_score)):
            got = metric().update(preds[:2], target[:2]).update(preds[2:], target[2:]).compute()
            assert float(got) == want == ref(*np64(target, preds))


def test_a_nearly_constant_target_is_scored_exactly():
    """A deliberate difference: torchmetrics calls SS_tot < 1e-4 zero and scores 0 here."""
    target = torch.tensor([-5.1608, -5.1609, -5.1608, -5.1608, -5.1608, -5.1608], dtype=torch.float64)
    preds = torch.tensor([-3.9865, -5.4648, -5.0238, -4.3899, -5.6672, -4.7336], dtype=torch.float64)
    np.testing.assert_allclose(float(r2_score(preds, target)), skm.r2_score(*np64(target, preds)), rtol=1e-9)
    assert float(torchmetrics.functional.r2_score(preds, target)) == 0.0


def test_pearson_is_exact_where_torchmetrics_gives_nan():
    """A deliberate difference: torchmetrics returns NaN (with a warning) when a variance is small
    against the largest deviation or overflows float32 once normalised; here only for 0."""
    g = torch.Generator().manual_seed(0)
    x = torch.randn(100, generator=g)
    y = x + 0.5 * torch.randn(100, generator=g)
    outlier_x = torch.zeros(100_000)
    outlier_x[0] = 1.0
    outlier_y = torch.randn(100_000, generator=g)
    outlier_y[0] = 5.0
    for preds, target in ((x * 1e-20, y * 1e-20), (outlier_x, outlier_y)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert torch.isnan(torchmetrics.functional.pearson_corrcoef(preds, target))
        want = pearson_ref(preds, target)
        assert float(PearsonCorrCoef().update(preds, target).compute()) == pytest.approx(want, rel=1e-6)


def test_variance_weighted_over_constant_targets_is_nan_as_torchmetrics():
    target = torch.tensor([[1.0, 2.0], [1.0, 2.0], [1.0, 2.0]])
    preds = torch.tensor([[1.0, 2.0], [0.0, 2.0], [2.0, 2.0]])
    for ours in (R2Score, ExplainedVariance):
        assert torch.isnan(ours(multioutput="variance_weighted").update(preds, target).compute())
    assert torch.isnan(torchmetrics.functional.r2_score(preds, target, multioutput="variance_weighted"))


def test_constant_column_gives_nan_correlation_like_scipy():
    x = torch.tensor([1.0, 2.0, 3.0, 4.0])
    const = torch.full((4,), 0.1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert np.isnan(scipy.stats.pearsonr(x.numpy(), const.numpy())[0])
    with pytest.warns(UserWarning, match=r"output\(s\) \[0\]"):
        assert torch.isnan(PearsonCorrCoef().update(x[:2], const[:2]).update(x[2:], const[2:]).compute())
    with pytest.warns(UserWarning):
        assert torch.isnan(pearson_corrcoef(const, x))
    with pytest.warns(UserWarning, match=r"output\(s\) \[1\]"):
        r = PearsonCorrCoef(num_outputs=2).update(torch.stack([x, x], 1), torch.stack([x * 2, const], 1)).compute()
    assert float(r[0]) == pytest.approx(1.0) and torch.isnan(r[1])


def test_r2_adjusted_falls_back_with_torchmetrics_warnings():
    preds, target = torch.tensor([1.0, 2.0, 4.0]), torch.tensor([1.0, 3.0, 3.0])
    with pytest.warns(UserWarning, match="Division by zero in adjusted r2 score"):
        got = R2Score(adjusted=2).update(preds, target).compute()
    assert float(got) == pytest.approx(skm.r2_score(target.numpy(), preds.numpy()))
    with pytest.warns(UserWarning, match="More independent regressions than data points"):
        R2Score(adjusted=3).update(preds, target).compute()


def test_outputs_are_read_from_the_first_batch():
    m = R2Score(multioutput="raw_values").update(torch.randn(4, 3), torch.randn(4, 3))
    before = m.residual_target_moments.clone()
    assert_rejects(m, (torch.randn(4), torch.randn(4)), ValueError, "the same shape after dim 0")
    assert torch.equal(m.residual_target_moments, before)
    assert m.compute().shape == (3,)
    with pytest.raises(ValueError, match="1D or 2D"):
        R2Score().update(torch.randn(4, 2, 3), torch.randn(4, 2, 3))
    # explained variance keeps [N, d1, d2] outputs
    ev = ExplainedVariance(multioutput="raw_values").update(torch.randn(5, 2, 3), torch.randn(5, 2, 3))
    assert ev.compute().shape == (2, 3)
    assert_rejects(ev, (torch.randn(5, 3, 2), torch.randn(5, 3, 2)), ValueError, "the same shape after dim 0")


@pytest.mark.parametrize(
    "factory", [P(R2Score, multioutput="raw_values"), P(ExplainedVariance, multioutput="raw_values")]
)
def test_forward_with_other_outputs_is_rejected_and_state_kept(factory):
    """In forward the batch is updated on fresh states; the mismatch shows only when they are
    merged into the accumulated ones, which must then be left as they were."""
    m = factory()
    m(torch.randn(6, 3), torch.randn(6, 3))
    before = m.compute()
    with pytest.raises(ValueError, match="moments of 1 and 3 outputs cannot be merged"):
        m(torch.randn(6), torch.randn(6))
    torch.testing.assert_close(m.compute(), before)
    assert m.update_count == 1


def test_r2_and_explained_variance_share_state_in_a_collection(monkeypatch):
    from torchtally.functional.regression import update as functional_regression

    calls = []
    original = functional_regression.residual_moments_update

    def counting(*args):
        calls.append(1)
        return original(*args)

    monkeypatch.setattr(functional_regression, "residual_moments_update", counting)
    col = MetricCollection({"r2": R2Score(), "ev": ExplainedVariance(), "r2_raw": R2Score(multioutput="raw_values")})
    batches = split(*THREE)
    for batch in batches:
        col.update(*batch)
    got = col.compute()
    assert len(calls) == len(batches)  # one state update per batch for all three
    preds, target = np64(THREE[0], THREE[1])
    np.testing.assert_allclose(got["r2"], skm.r2_score(target, preds), rtol=1e-10)
    np.testing.assert_allclose(got["ev"], skm.explained_variance_score(target, preds), rtol=1e-10)
    np.testing.assert_allclose(got["r2_raw"], skm.r2_score(target, preds, multioutput="raw_values"), rtol=1e-10)


ALL = [
    MeanSquaredError,
    MeanAbsoluteError,
    MeanAbsolutePercentageError,
    R2Score,
    ExplainedVariance,
    PearsonCorrCoef,
    P(CosineSimilarity, reduction="mean"),
]


@pytest.mark.parametrize("factory", ALL + [CosineSimilarity, P(CosineSimilarity, reduction="none")])
def test_ignite_style_compute_before_any_update_raises(factory):
    metric = factory()
    with metric.raising_if_never_updated(), pytest.raises(NotComputableError):
        metric.compute()


@pytest.mark.parametrize("factory", ALL)
def test_inputs_that_require_grad_leave_no_graph_in_the_state(factory):
    shape = (5, 3) if "Cosine" in str(factory) else (5,)
    preds = torch.randn(shape, requires_grad=True)
    metric = factory().update(preds * 2, torch.randn(shape))
    assert not any(getattr(metric, name).requires_grad for name in metric.state_names)
    assert not metric.compute().requires_grad


def test_c_core_and_reference_agree():
    if not kernels.has_c():
        pytest.skip("torchtally._C is not built")
    results = {}
    for backend in ("c", "reference"):
        previous = kernels.set_backend(backend)
        try:
            results[backend] = [
                f(*BIG3)
                for f in (
                    P(r2_score, multioutput="raw_values"),
                    pearson_corrcoef,
                    P(explained_variance, multioutput="raw_values"),
                )
            ]
        finally:
            kernels.set_backend(previous)
    for c, ref in zip(results["c"], results["reference"]):
        torch.testing.assert_close(c, ref, rtol=1e-12, atol=1e-12)


# -- bad input: clear errors, state unchanged ------------------------------------------------------

GOOD = (torch.randn(4), torch.randn(4))
NAN = torch.tensor([1.0, float("nan"), 2.0, 3.0])
INF = torch.tensor([1.0, 2.0, float("inf"), 3.0])


@pytest.mark.parametrize(
    "factory",
    [MeanSquaredError, MeanAbsoluteError, MeanAbsolutePercentageError, R2Score, ExplainedVariance, PearsonCorrCoef],
)
@pytest.mark.parametrize(
    "args, exc, match",
    [
        ((NAN, GOOD[1]), ValueError, r"preds: expected finite values, got nan at flat index 1"),
        ((GOOD[0], NAN), ValueError, r"target: expected finite values, got nan at flat index 1"),
        ((GOOD[0], INF), ValueError, r"target: expected finite values, got inf at flat index 2"),
        ((GOOD[0], GOOD[1][:3]), InputShapeError, r"target: expected the shape of preds \[4\], got \[3\]"),
        ((GOOD[0] > 0, GOOD[1]), TypeError, r"preds: expected a floating or integer tensor, got bool"),
        ((GOOD[0], GOOD[1].to(torch.complex64)), TypeError, r"target: expected a floating or integer tensor"),
        (([1.0, 2.0], GOOD[1]), TypeError, r"preds: expected a tensor, got list"),
        ((GOOD[0], torch.empty(4, device="meta")), ValueError, r"target: expected a tensor on cpu"),
    ],
)
def test_bad_input_is_rejected_and_state_kept(factory, args, exc, match):
    metric = factory().update(*GOOD)
    before = metric.compute()
    assert_rejects(metric, args, exc, match)
    torch.testing.assert_close(metric.compute(), before)


def _with(values, where, *more):
    t = torch.arange(1.0, 9.0).reshape(4, 2)
    for (i, j), v in [(where, values)] + list(more):
        t[i, j] = v
    return t


INF, NEG = float("inf"), float("-inf")
CLEAN = torch.arange(1.0, 9.0).reshape(4, 2) + 0.5


@pytest.mark.parametrize(
    "factory",
    [
        MeanSquaredError,
        MeanAbsoluteError,
        MeanAbsolutePercentageError,
        R2Score,
        ExplainedVariance,
        P(PearsonCorrCoef, num_outputs=2),
        CosineSimilarity,
    ],
    ids=lambda f: getattr(f, "__name__", None) or f.func.__name__,
)
@pytest.mark.parametrize(
    "preds, target, match",
    [
        (_with(INF, (1, 1)), CLEAN, r"preds: expected finite values, got inf at flat index 3"),
        (CLEAN, _with(NEG, (2, 0)), r"target: expected finite values, got -inf at flat index 4"),
        (_with(INF, (0, 1)), _with(INF, (0, 1)), r"preds: .* got inf at flat index 1"),  # inf - inf is NaN
        (_with(INF, (0, 0), ((3, 1), NEG)), CLEAN, r"preds: .* got inf at flat index 0"),  # sums to NaN
        (CLEAN, _with(float("nan"), (3, 0)), r"target: expected finite values, got nan at flat index 6"),
    ],
    ids=["preds_inf", "target_neg_inf", "both_inf_same_place", "plus_and_minus_inf", "target_nan"],
)
def test_every_non_finite_input_is_found(factory, preds, target, match):
    metric = factory().update(CLEAN, CLEAN * 2)
    before = {name: getattr(metric, name).clone() for name in metric.state_names}
    with pytest.raises(ValueError, match=match):
        metric.update(preds, target)
    for name, value in before.items():
        assert torch.equal(getattr(metric, name), value), name


def test_an_overflow_on_finite_inputs_is_not_an_input_error():
    """The finiteness check looks at a summary of the batch first; a summary that overflows on
    finite inputs is searched, nothing is found, and the value is torchmetrics' (inf)."""
    big = torch.tensor([1e200, -1e200], dtype=torch.float64)
    got = F64(MeanSquaredError)().update(big, -big).compute()
    assert got == torch.inf == torchmetrics.functional.mean_squared_error(big, -big)


def test_a_shape_mismatch_is_also_a_runtime_error_as_torchmetrics():
    for fn in (mean_squared_error, r2_score, pearson_corrcoef):
        with pytest.raises(RuntimeError, match="Predictions and targets are expected to have the same shape"):
            fn(torch.randn(5), torch.randn(4))


def _pairs(*shape):
    return torch.randn(shape), torch.randn(shape)


@pytest.mark.parametrize(
    "factory, good, args, match",
    [
        (P(MeanSquaredError, num_outputs=3), _pairs(2, 3), _pairs(4, 2), r"preds: expected shape \[N, 3\]"),
        (P(MeanAbsoluteError, num_outputs=2), _pairs(2, 2), _pairs(4), r"preds: expected shape \[N, 2\]"),
        (
            PearsonCorrCoef,
            _pairs(3),
            _pairs(4, 2),
            r"preds: expected shape \[N\] or \[N, 1\] \(num_outputs=1\), got float32 \[4, 2\]; "
            r"for 2 outputs pass num_outputs=2",
        ),
        (P(PearsonCorrCoef, num_outputs=2), _pairs(3, 2), _pairs(4), r"preds: expected shape \[N, 2\]"),
        (
            P(PearsonCorrCoef, num_outputs=2),
            _pairs(3, 2),
            (torch.randn(4, 2), torch.randn(4, 3)),
            r"target: expected the shape",
        ),
        (P(PearsonCorrCoef, num_outputs=2), _pairs(3, 2), _pairs(4, 2, 2), r"1- or 2-dimensional"),
        (CosineSimilarity, _pairs(3, 4), _pairs(4), r"preds: expected shape \[N, d\]"),
        (
            R2Score,
            _pairs(3, 2),
            (torch.randn(4, 2), torch.tensor([[1.0, 2.0]] * 3 + [[NAN[1], 1.0]])),
            r"target: expected finite values, got nan at flat index 6",
        ),
    ],
)
def test_bad_shapes_are_rejected_and_state_kept(factory, good, args, match):
    metric = factory().update(*good)
    assert_rejects(metric, args, ValueError, match)


@pytest.mark.parametrize(
    "factory, match",
    [
        (P(MeanSquaredError, num_outputs=0), "num_outputs: expected a positive int"),
        (P(MeanSquaredError, squared="yes"), "Expected argument `squared` to be a boolean"),
        (P(R2Score, multioutput="mean"), "multioutput: expected one of"),
        (P(R2Score, adjusted=-1), "adjusted: expected an int >= 0"),
        (P(ExplainedVariance, multioutput=None), "multioutput: expected one of"),
        (P(PearsonCorrCoef, num_outputs=1.5), "num_outputs"),
        (P(CosineSimilarity, reduction="max"), "reduction: expected one of"),
    ],
)
def test_bad_options(factory, match):
    with pytest.raises(ValueError, match=match):
        factory()


def test_doctests():
    # every module of the regression packages (each class's and form's example)
    for package in ("torchtally.regression", "torchtally.functional.regression"):
        failed, attempted = package_doctests(package)
        assert attempted > 0 and failed == 0, package
