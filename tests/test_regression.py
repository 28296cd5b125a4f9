"""Regression metrics against scikit-learn / scipy / numpy, torchmetrics parity, edge cases and
bad input. Every configuration in CASES also runs through the shared tester (metric_tester);
their 3-rank distributed check is in test_regression_aggregation_distributed.py."""
import functools
import warnings

import numpy as np
import pytest
import scipy.stats
import sklearn.metrics as skm
import torch
import torchmetrics

from metric_tester import CollectionFactory, MetricCase, assert_rejects, check_metric, states_of
from torchtally import (
    CosineSimilarity,
    ExplainedVariance,
    MeanAbsoluteError,
    MeanAbsolutePercentageError,
    MeanSquaredError,
    MetricCollection,
    NotComputableError,
    PearsonCorrCoef,
    R2Score,
)
from torchtally.functional import (
    _kernels,
    cosine_similarity,
    explained_variance,
    mean_absolute_error,
    mean_absolute_percentage_error,
    mean_squared_error,
    pearson_corrcoef,
    r2_score,
)

P = functools.partial
SIZES = (7, 0, 13, 5, 9, 1, 11)  # batch sizes: uneven, one empty batch, 46 samples


def make_data(d=None, offset=0.0, noise=0.5, dtype=torch.float64, seed=0):
    """target ~ offset + N(0, 1), preds = target + noise * N(0, 1); shape [N] or [N, d]."""
    g = torch.Generator().manual_seed(seed)
    shape = (sum(SIZES),) if d is None else (sum(SIZES), d)
    target = torch.randn(shape, generator=g, dtype=torch.float64) * torch.linspace(1, 3, d or 1) + offset
    preds = target + noise * torch.randn(shape, generator=g, dtype=torch.float64)
    return preds.to(dtype), target.to(dtype)


def split(*tensors):
    out, lo = [], 0
    for size in SIZES:
        out.append(tuple(t[lo:lo + size] for t in tensors))
        lo += size
    return out


def np64(*tensors):
    return [t.double().numpy() for t in tensors]


def sk(fn, **kw):
    """A scikit-learn metric(y_true, y_pred) as a reference(preds, target)."""
    return lambda p, t: fn(*np64(t, p), **kw)


def pearson_ref(p, t):
    p, t = np64(p, t)
    if p.ndim == 1:
        return scipy.stats.pearsonr(p, t)[0]
    return np.array([scipy.stats.pearsonr(p[:, i], t[:, i])[0] for i in range(p.shape[1])])


def cosine_ref(reduction):
    def ref(p, t):
        p, t = np64(p, t)
        sims = (p * t).sum(1) / (np.linalg.norm(p, axis=1) * np.linalg.norm(t, axis=1))
        return {"sum": sims.sum(), "mean": sims.mean(), "none": sims}[reduction]
    return ref


def adjusted_r2_ref(k):
    def ref(p, t):
        n = p.shape[0]
        return 1 - (1 - skm.r2_score(*np64(t, p))) * (n - 1) / (n - k - 1)
    return ref


FLAT = make_data(d=2)  # [N, 2] read as 2N samples by num_outputs=1 error metrics
ONE = make_data()
THREE = make_data(d=3)
ONE_F32 = make_data(dtype=torch.float32, seed=1)
POSITIVE = (ONE[0].abs() + 1, ONE[1].abs() + 1)
BIG = make_data(offset=1e6, seed=2)  # mean 1e6, spread 1: naive sums of squares lose digits
BIG3 = make_data(d=3, offset=1e6, noise=0.1, seed=3)
INTS = (torch.randint(-5, 6, (46,), generator=torch.Generator().manual_seed(4)),
        torch.randint(-5, 6, (46,), generator=torch.Generator().manual_seed(5)))


def case(name, factory, data, reference, rtol=1e-10, atol=1e-12):
    return MetricCase(name, factory, split(*data), reference, rtol=rtol, atol=atol)


CASES = [
    case("mse", MeanSquaredError, FLAT, sk(skm.mean_squared_error)),
    case("mse_int_inputs", MeanSquaredError, INTS, sk(skm.mean_squared_error)),
    case("rmse", P(MeanSquaredError, squared=False), ONE_F32, sk(skm.root_mean_squared_error), rtol=1e-6),
    case("mse_3_outputs", P(MeanSquaredError, num_outputs=3), THREE, sk(skm.mean_squared_error, multioutput="raw_values")),
    case("mse_offset", MeanSquaredError, BIG, sk(skm.mean_squared_error)),
    case("mae", MeanAbsoluteError, FLAT, sk(skm.mean_absolute_error)),
    case("mae_3_outputs", P(MeanAbsoluteError, num_outputs=3), THREE,
         sk(skm.mean_absolute_error, multioutput="raw_values")),
    case("mape", MeanAbsolutePercentageError, POSITIVE, sk(skm.mean_absolute_percentage_error)),
    case("r2", R2Score, ONE, sk(skm.r2_score)),
    case("r2_float32", R2Score, ONE_F32, sk(skm.r2_score), rtol=1e-9),
    case("r2_raw", P(R2Score, num_outputs=3, multioutput="raw_values"), THREE,
         sk(skm.r2_score, multioutput="raw_values")),
    case("r2_variance_weighted", P(R2Score, num_outputs=3, multioutput="variance_weighted"), THREE,
         sk(skm.r2_score, multioutput="variance_weighted")),
    case("r2_adjusted", P(R2Score, adjusted=3), ONE, adjusted_r2_ref(3)),
    case("r2_offset", R2Score, BIG, sk(skm.r2_score)),
    case("r2_offset_3", P(R2Score, num_outputs=3, multioutput="raw_values"), BIG3,
         sk(skm.r2_score, multioutput="raw_values")),
    case("explained_variance", ExplainedVariance, ONE, sk(skm.explained_variance_score)),
    case("explained_variance_raw", P(ExplainedVariance, num_outputs=3, multioutput="raw_values"), THREE,
         sk(skm.explained_variance_score, multioutput="raw_values")),
    case("explained_variance_weighted", P(ExplainedVariance, num_outputs=3, multioutput="variance_weighted"),
         THREE, sk(skm.explained_variance_score, multioutput="variance_weighted")),
    case("explained_variance_offset", ExplainedVariance, BIG, sk(skm.explained_variance_score)),
    case("pearson", PearsonCorrCoef, ONE, pearson_ref),
    case("pearson_3", P(PearsonCorrCoef, num_outputs=3), THREE, pearson_ref),
    case("pearson_offset", P(PearsonCorrCoef, num_outputs=3), BIG3, pearson_ref),
    case("cosine_sum", CosineSimilarity, THREE, cosine_ref("sum")),
    case("cosine_mean", P(CosineSimilarity, reduction="mean"), THREE, cosine_ref("mean")),
    case("cosine_none", P(CosineSimilarity, reduction="none"), THREE, cosine_ref("none")),
    # R2 and explained variance share one moments state in a collection (one merge slot).
    case("collection_shared_moments",
         CollectionFactory(r2=P(R2Score, num_outputs=3), ev=P(ExplainedVariance, num_outputs=3),
                           mse=P(MeanSquaredError, num_outputs=3), pearson=P(PearsonCorrCoef, num_outputs=3)),
         BIG3, lambda p, t: {"r2": sk(skm.r2_score)(p, t), "ev": sk(skm.explained_variance_score)(p, t),
                             "mse": sk(skm.mean_squared_error, multioutput="raw_values")(p, t),
                             "pearson": pearson_ref(p, t)}),
]


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
        (P(mean_squared_error, squared=False, num_outputs=3),
         sk(skm.root_mean_squared_error, multioutput="raw_values"), THREE),
        (P(mean_absolute_error, num_outputs=3), sk(skm.mean_absolute_error, multioutput="raw_values"), THREE),
        (mean_absolute_percentage_error, sk(skm.mean_absolute_percentage_error), POSITIVE),
        (P(r2_score, multioutput="raw_values"), sk(skm.r2_score, multioutput="raw_values"), BIG3),
        (P(r2_score, multioutput="variance_weighted"), sk(skm.r2_score, multioutput="variance_weighted"), THREE),
        (P(r2_score, adjusted=2), adjusted_r2_ref(2), ONE),
        (P(explained_variance, multioutput="raw_values"), sk(skm.explained_variance_score, multioutput="raw_values"), THREE),
        (pearson_corrcoef, pearson_ref, BIG3),
        (P(cosine_similarity, reduction="none"), cosine_ref("none"), THREE),
        (cosine_similarity, cosine_ref("sum"), THREE),
    ],
)
def test_functional_against_reference(ours, reference, data):
    np.testing.assert_allclose(ours(*data).numpy(), reference(*data), rtol=1e-10, atol=1e-12)


# -- torchmetrics parity -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "ours, theirs, data",
    [
        (MeanSquaredError, torchmetrics.MeanSquaredError, ONE),
        (P(MeanSquaredError, squared=False, num_outputs=3), P(torchmetrics.MeanSquaredError, squared=False, num_outputs=3), THREE),
        (P(MeanAbsoluteError, num_outputs=3), P(torchmetrics.MeanAbsoluteError, num_outputs=3), THREE),
        (MeanAbsolutePercentageError, torchmetrics.MeanAbsolutePercentageError, ONE),  # incl. |target| < 1
        (P(R2Score, num_outputs=3, multioutput="variance_weighted"), P(torchmetrics.R2Score, multioutput="variance_weighted"), THREE),
        (P(R2Score, adjusted=2), P(torchmetrics.R2Score, adjusted=2), ONE),
        (P(ExplainedVariance, num_outputs=3, multioutput="raw_values"), P(torchmetrics.ExplainedVariance, multioutput="raw_values"), THREE),
        (P(PearsonCorrCoef, num_outputs=3), P(torchmetrics.PearsonCorrCoef, num_outputs=3), THREE),
        (P(CosineSimilarity, reduction="none"), P(torchmetrics.CosineSimilarity, reduction="none"), THREE),
        (CosineSimilarity, torchmetrics.CosineSimilarity, THREE),
    ],
)
def test_torchmetrics_parity(ours, theirs, data):
    a, b = ours(), theirs()
    for batch in split(*data):
        if batch[0].shape[0]:  # torchmetrics rejects some empty batches
            a.update(*batch)
            b.update(*batch)
    # torchmetrics keeps float32 sums for several metrics, hence the float32 tolerance.
    torch.testing.assert_close(a.compute(), b.compute().double(), rtol=1e-5, atol=1e-7)


# -- edge cases ----------------------------------------------------------------------------------

ALL = [MeanSquaredError, MeanAbsoluteError, MeanAbsolutePercentageError, R2Score, ExplainedVariance,
       PearsonCorrCoef, P(CosineSimilarity, reduction="mean")]


@pytest.mark.parametrize("factory", ALL + [CosineSimilarity, P(CosineSimilarity, reduction="none")])
def test_empty_epoch_raises(factory):
    metric = factory()
    with metric.raising_if_never_updated(), pytest.raises(NotComputableError):
        metric.compute()


@pytest.mark.parametrize("factory", ALL)
def test_only_empty_batches_raise(factory):
    shape = (0, 3) if "Cosine" in str(factory) else (0,)
    m = factory().update(torch.empty(shape), torch.empty(shape))
    with pytest.raises(NotComputableError, match="no samples"):
        m.compute()


def test_cosine_over_no_rows_has_a_natural_value():
    empty = (torch.empty(0, 3), torch.empty(0, 3))
    assert float(CosineSimilarity().update(*empty).compute()) == 0.0
    assert CosineSimilarity(reduction=None).update(*empty).compute().shape == (0,)


def test_constant_target_follows_sklearn():
    target = torch.full((6,), 2.0)
    noisy = torch.tensor([1.0, 2.0, 3.0, 2.0, 2.5, 1.5])
    for preds, want in ((target.clone(), 1.0), (noisy, 0.0)):
        for metric, ref in ((R2Score, skm.r2_score), (ExplainedVariance, skm.explained_variance_score)):
            got = metric().update(preds[:2], target[:2]).update(preds[2:], target[2:]).compute()
            assert float(got) == want == ref(*np64(target, preds))


def test_constant_column_gives_nan_correlation_like_scipy():
    x = torch.tensor([1.0, 2.0, 3.0, 4.0])
    const = torch.full((4,), 0.1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert np.isnan(scipy.stats.pearsonr(x.numpy(), const.numpy())[0])
    assert torch.isnan(PearsonCorrCoef().update(x[:2], const[:2]).update(x[2:], const[2:]).compute())
    assert torch.isnan(pearson_corrcoef(const, x))
    r = PearsonCorrCoef(num_outputs=2).update(torch.stack([x, x], 1), torch.stack([x * 2, const], 1)).compute()
    assert float(r[0]) == pytest.approx(1.0) and torch.isnan(r[1])


def test_r2_single_sample_is_nan_and_adjusted_falls_back():
    with pytest.warns(UserWarning, match="fewer than 2 samples"):
        assert torch.isnan(R2Score().update(torch.tensor([1.0]), torch.tensor([2.0])).compute())
    preds, target = torch.tensor([1.0, 2.0, 4.0]), torch.tensor([1.0, 3.0, 3.0])
    with pytest.warns(UserWarning, match="unadjusted"):
        got = R2Score(adjusted=2).update(preds, target).compute()
    assert float(got) == pytest.approx(skm.r2_score(target.numpy(), preds.numpy()))


def test_r2_and_explained_variance_share_state_in_a_collection():
    calls = []
    original = R2Score.update

    class CountingR2(R2Score):
        def update(self, preds, target):
            calls.append(1)
            original(self, preds, target)

    # The first key in sorted order owns the shared state: make it the counting one.
    col = MetricCollection({"r2": CountingR2(num_outputs=3), "x_ev": ExplainedVariance(num_outputs=3),
                            "r2_raw": R2Score(num_outputs=3, multioutput="raw_values")})
    batches = split(*THREE)
    for batch in batches:
        col.update(*batch)
    got = col.compute()
    assert len(calls) == len(batches)  # one state update per batch for all three
    preds, target = np64(THREE[0], THREE[1])
    np.testing.assert_allclose(got["r2"], skm.r2_score(target, preds), rtol=1e-10)
    np.testing.assert_allclose(got["x_ev"], skm.explained_variance_score(target, preds), rtol=1e-10)
    np.testing.assert_allclose(got["r2_raw"], skm.r2_score(target, preds, multioutput="raw_values"), rtol=1e-10)


@pytest.mark.parametrize("factory", ALL)
def test_inputs_that_require_grad_leave_no_graph_in_the_state(factory):
    shape = (5, 3) if "Cosine" in str(factory) else (5,)
    preds = torch.randn(shape, requires_grad=True)
    metric = factory().update(preds * 2, torch.randn(shape))
    assert not any(v.requires_grad for v in states_of(metric).values())
    assert not any(v.requires_grad for v in metric.__dict__.values() if isinstance(v, torch.Tensor))


def test_c_core_and_reference_agree():
    if not _kernels.has_c():
        pytest.skip("torchtally._C is not built")
    results = {}
    for backend in ("c", "reference"):
        previous = _kernels.set_backend(backend)
        try:
            results[backend] = [f(*BIG3) for f in (P(r2_score, multioutput="raw_values"), pearson_corrcoef,
                                                    P(explained_variance, multioutput="raw_values"))]
        finally:
            _kernels.set_backend(previous)
    for c, ref in zip(results["c"], results["reference"]):
        torch.testing.assert_close(c, ref, rtol=1e-12, atol=1e-12)


# -- bad input: clear errors, state unchanged ------------------------------------------------------

GOOD = (torch.randn(4), torch.randn(4))
NAN = torch.tensor([1.0, float("nan"), 2.0, 3.0])
INF = torch.tensor([1.0, 2.0, float("inf"), 3.0])


@pytest.mark.parametrize("factory", [MeanSquaredError, MeanAbsoluteError, MeanAbsolutePercentageError,
                                     R2Score, ExplainedVariance, PearsonCorrCoef])
@pytest.mark.parametrize(
    "args, exc, match",
    [
        ((NAN, GOOD[1]), ValueError, r"preds: expected finite values, got nan at index 1"),
        ((GOOD[0], NAN), ValueError, r"target: expected finite values, got nan at index 1"),
        ((GOOD[0], INF), ValueError, r"target: expected finite values, got inf at index 2"),
        ((GOOD[0], GOOD[1][:3]), ValueError, r"target: expected the shape of preds \[4\], got \[3\]"),
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


def _pairs(*shape):
    return torch.randn(shape), torch.randn(shape)


@pytest.mark.parametrize(
    "factory, good, args, match",
    [
        (P(MeanSquaredError, num_outputs=3), _pairs(2, 3), _pairs(4, 2), r"preds: expected shape \[N, 3\]"),
        (P(R2Score, num_outputs=2), _pairs(2, 2), _pairs(4), r"preds: expected shape \[N, 2\]"),
        (PearsonCorrCoef, _pairs(3), _pairs(4, 2),
         r"preds: expected shape \[N\] or \[N, 1\] \(num_outputs=1\), got float32 \[4, 2\]; for 2 outputs pass num_outputs=2"),
        (P(PearsonCorrCoef, num_outputs=2), _pairs(3, 2), (torch.randn(4, 2), torch.randn(4, 3)),
         r"target: expected the shape"),
        (CosineSimilarity, _pairs(3, 4), _pairs(4), r"preds: expected shape \[N, d\]"),
        (P(R2Score, num_outputs=2), _pairs(3, 2), (torch.randn(4, 2), torch.tensor([[1.0, 2.0]] * 3 + [[NAN[1], 1.0]])),
         r"target: expected finite values, got nan at flat index 6"),
    ],
)
def test_bad_shapes_are_rejected_and_state_kept(factory, good, args, match):
    metric = factory().update(*good)
    assert_rejects(metric, args, ValueError, match)


@pytest.mark.parametrize(
    "factory, match",
    [
        (P(MeanSquaredError, num_outputs=0), "num_outputs: expected an int >= 1"),
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
    import doctest

    import torchtally.functional.regression
    import torchtally.metrics.regression

    for module in (torchtally.metrics.regression, torchtally.functional.regression):
        failed, attempted = doctest.testmod(module)
        assert attempted > 0 and failed == 0
