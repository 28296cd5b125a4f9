"""The regression metrics kept as sums (metrics/error_sums.py) and the divergences and critical
success index (metrics/divergences.py): every configuration through the shared tester against
scikit-learn / scipy / numpy, in one process and on 3 gloo ranks; values, dtypes and shapes
against torchmetrics (classes and functional forms); exactness where torchmetrics loses
digits; bad input and bad options (clear errors, state unchanged); the doc examples."""

import functools
import warnings

import numpy as np
import pytest
import scipy.spatial.distance
import scipy.stats
import sklearn.metrics as skm
import torch
import torchmetrics
import torchmetrics.functional.regression as tmf
from support.doctests import package_doctests
from support.metric_tester import MetricCase, assert_rejects, check_metric, run_distributed_cases
from support.regression_cases import BIG, BIG3, F64, FLAT, ONE, ONE_F32, POSITIVE, THREE, np64, sk, split

import torchtally.functional as F
import torchtally.functional.regression as FR
import torchtally.regression as R
from torchtally.regression import (
    CriticalSuccessIndex,
    JensenShannonDivergence,
    KLDivergence,
    LogCoshError,
    MeanSquaredLogError,
    MinkowskiDistance,
    NormalizedRootMeanSquaredError,
    RelativeSquaredError,
    SymmetricMeanAbsolutePercentageError,
    TweedieDevianceScore,
    WeightedMeanAbsolutePercentageError,
)

P = functools.partial
_g = torch.Generator().manual_seed(11)
DIST = (
    torch.rand(46, 4, generator=_g, dtype=torch.float64) + 0.05,
    torch.rand(46, 4, generator=_g, dtype=torch.float64),
)
DIST[0][3, 2] = DIST[1][3, 2] = 0.0  # a zero in p and q at one place: its term is 0 (0 log 0)
LOG_DIST = tuple(torch.log_softmax(x * 3, dim=1) for x in DIST)


def case(name, factory, data, reference, rtol=1e-10, atol=1e-12, **kw):
    return MetricCase(name, factory, split(*data), reference, rtol=rtol, atol=atol, **kw)


# -- references -------------------------------------------------------------------------------


def log_cosh_ref(p, t):
    return np.log(np.cosh(np.subtract(*np64(p, t)))).mean(0)


def minkowski_ref(power):
    return lambda p, t: scipy.spatial.distance.minkowski(*(x.reshape(-1) for x in np64(p, t)), p=power)


def nrmse_ref(normalization):
    def ref(p, t):
        p, t = np64(p, t)
        if p.ndim == 1 or p.shape[1] == 2:  # num_outputs=1: every element a sample
            p, t = p.reshape(-1, 1), t.reshape(-1, 1)
        rmse = np.sqrt(((t - p) ** 2).mean(0))
        denom = {"mean": t.mean(0), "range": t.max(0) - t.min(0), "std": t.std(0), "l2": np.linalg.norm(t, axis=0)}[
            normalization
        ]
        out = rmse / denom
        return out[0] if out.size == 1 else out

    return ref


def rse_ref(squared):
    def ref(p, t):
        p, t = np64(p, t)
        p, t = p.reshape(p.shape[0], -1), t.reshape(t.shape[0], -1)
        rse = ((t - p) ** 2).sum(0) / ((t - t.mean(0)) ** 2).sum(0)
        return (rse if squared else np.sqrt(rse)).mean()

    return ref


def smape_ref(p, t):
    p, t = np64(p, t)
    return (2 * np.abs(t - p) / np.maximum(np.abs(t) + np.abs(p), 1.17e-6)).mean()


def wmape_ref(p, t):
    p, t = np64(p, t)
    return np.abs(t - p).sum() / max(np.abs(t).sum(), 1.17e-6)


def csi_ref(threshold):
    def ref(p, t):
        pb, tb = np64(p, t)
        pb, tb = pb >= threshold, tb >= threshold
        hits, misses, alarms = (pb & tb).sum(), (~pb & tb).sum(), (pb & ~tb).sum()
        return hits / (hits + misses + alarms) if hits + misses + alarms else 0.0

    return ref


def csi_sequence_ref(threshold):
    """keep_sequence_dim=1: per batch, one value per column, batches one after another."""
    return lambda batches: np.concatenate(
        [[csi_ref(threshold)(p[:, j], t[:, j]) for j in range(p.shape[1])] for p, t in batches]
    )


def kl_ref(reduction, log_prob=False):
    def ref(p, q):
        p, q = np64(p, q)
        if log_prob:
            p, q = np.exp(p), np.exp(q)
        rows = scipy.stats.entropy(p, q, axis=1)
        return {"mean": rows.mean(), "sum": rows.sum(), "none": rows}[reduction]

    return ref


def js_ref(p, q, log_prob=False):
    p, q = np64(p, q)
    if log_prob:
        p, q = np.exp(p), np.exp(q)
    return (scipy.spatial.distance.jensenshannon(p, q, axis=1) ** 2).mean()


CASES = [
    case("log_cosh", F64(LogCoshError), ONE, log_cosh_ref),
    case("log_cosh_float32_result", LogCoshError, ONE_F32, log_cosh_ref, rtol=1e-6),
    case("log_cosh_3_outputs", F64(LogCoshError, num_outputs=3), THREE, log_cosh_ref),
    case("msle", F64(MeanSquaredLogError), POSITIVE, sk(skm.mean_squared_log_error)),
    case("minkowski_3", F64(MinkowskiDistance, p=3), FLAT, minkowski_ref(3)),
    case(
        "minkowski_1.5_ints", F64(MinkowskiDistance, p=1.5), (ONE[0].round().long(), ONE[1].long()), minkowski_ref(1.5)
    ),
    case("nrmse_mean", F64(NormalizedRootMeanSquaredError), POSITIVE, nrmse_ref("mean")),
    case("nrmse_range", F64(NormalizedRootMeanSquaredError, normalization="range"), FLAT, nrmse_ref("range")),
    case("nrmse_std_offset", F64(NormalizedRootMeanSquaredError, normalization="std"), BIG, nrmse_ref("std")),
    case("nrmse_l2", F64(NormalizedRootMeanSquaredError, normalization="l2"), ONE, nrmse_ref("l2")),
    case(
        "nrmse_range_3",
        P(NormalizedRootMeanSquaredError, normalization="range", num_outputs=3),
        THREE,
        nrmse_ref("range"),
    ),
    case(
        "nrmse_std_3_offset",
        F64(NormalizedRootMeanSquaredError, normalization="std", num_outputs=3),
        BIG3,
        nrmse_ref("std"),
        rtol=1e-9,
    ),
    case("rse", F64(RelativeSquaredError), ONE, rse_ref(True)),
    case("rse_offset", F64(RelativeSquaredError), BIG, rse_ref(True), rtol=1e-9),
    case("rrse_3_outputs", F64(RelativeSquaredError, num_outputs=3, squared=False), BIG3, rse_ref(False), rtol=1e-9),
    case("smape", F64(SymmetricMeanAbsolutePercentageError), ONE, smape_ref),
    case("wmape", F64(WeightedMeanAbsolutePercentageError), FLAT, wmape_ref),
    *[
        case(
            f"tweedie_{power}",
            F64(TweedieDevianceScore, power=power),
            POSITIVE,
            sk(skm.mean_tweedie_deviance, power=power),
            rtol=1e-9,
        )
        for power in (0.0, 1, 1.5, 2, 3, -0.5)
    ],
    case("csi", P(CriticalSuccessIndex, 0.0), ONE, csi_ref(0.0), rtol=1e-7),
    case("csi_ints", P(CriticalSuccessIndex, threshold=1), (ONE[0].long(), ONE[1].long()), csi_ref(1), rtol=1e-7),
    MetricCase(
        "csi_sequence",
        P(CriticalSuccessIndex, 0.5, keep_sequence_dim=1),
        split(*THREE),
        csi_sequence_ref(0.5),
        rtol=1e-7,
        reference_on_batches=True,
    ),
    case("kl_mean", F64(KLDivergence), DIST, kl_ref("mean")),
    case("kl_sum_log_prob", F64(KLDivergence, log_prob=True, reduction="sum"), LOG_DIST, kl_ref("sum", True)),
    case("kl_none", F64(KLDivergence, reduction="none"), DIST, kl_ref("none")),
    case("js_mean", JensenShannonDivergence, DIST, js_ref),  # float64 inputs: float64 result, as torchmetrics
    case("js_log_prob", F64(JensenShannonDivergence, log_prob=True), LOG_DIST, P(js_ref, log_prob=True)),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_lifecycle_and_reference(case):
    check_metric(case)


@pytest.mark.distributed
def test_all_cases_on_three_ranks():
    run_distributed_cases(CASES, world_size=3)


# -- parity with torchmetrics -------------------------------------------------------------------

PARITY = [
    ("LogCoshError", {}, ONE_F32),
    ("LogCoshError", {"num_outputs": 3}, THREE),
    ("MeanSquaredLogError", {}, POSITIVE),
    ("MinkowskiDistance", {"p": 2.5}, ONE_F32),
    *[("NormalizedRootMeanSquaredError", {"normalization": n}, ONE_F32) for n in ("mean", "range", "std", "l2")],
    *[
        ("NormalizedRootMeanSquaredError", {"normalization": n, "num_outputs": 3}, THREE)
        for n in ("mean", "range", "std", "l2")
    ],
    ("RelativeSquaredError", {"num_outputs": 3, "squared": False}, THREE),
    ("SymmetricMeanAbsolutePercentageError", {}, ONE_F32),
    ("WeightedMeanAbsolutePercentageError", {}, FLAT),
    *[("TweedieDevianceScore", {"power": power}, POSITIVE) for power in (0.0, 1, 1.5, 2, 3, -0.5)],
    ("CriticalSuccessIndex", {"threshold": 0.5}, THREE),
    ("CriticalSuccessIndex", {"threshold": 0.5, "keep_sequence_dim": 1}, THREE),
    *[(n, {"reduction": r}, DIST) for n in ("KLDivergence", "JensenShannonDivergence") for r in ("mean", "sum")],
    ("KLDivergence", {"reduction": "none"}, tuple(x.float() for x in DIST)),
    ("JensenShannonDivergence", {"log_prob": True}, LOG_DIST),
]


@pytest.mark.parametrize("name, kwargs, data", PARITY, ids=lambda x: str(x) if not isinstance(x, tuple) else "")
def test_values_dtypes_and_shapes_as_torchmetrics(name, kwargs, data):
    ours, theirs = getattr(R, name)(**kwargs), getattr(torchmetrics.regression, name)(**kwargs)
    for batch in split(*data):
        if batch[0].numel():  # torchmetrics' keep_sequence_dim / divergences refuse some empty batches
            ours.update(*batch)
            theirs.update(*batch)
    got, want = ours.compute(), theirs.compute()
    assert got.dtype == want.dtype and got.shape == want.shape, (got, want)
    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-6)


FUNCTIONAL = [
    ("log_cosh_error", {}, ONE),
    ("log_cosh_error", {}, THREE),
    ("mean_squared_log_error", {}, POSITIVE),
    ("minkowski_distance", {"p": 3}, FLAT),
    *[("normalized_root_mean_squared_error", {"normalization": n}, FLAT) for n in ("mean", "range", "std", "l2")],
    ("normalized_root_mean_squared_error", {"normalization": "std", "num_outputs": 3}, THREE),
    ("relative_squared_error", {}, THREE),
    ("relative_squared_error", {"squared": False}, ONE),
    ("symmetric_mean_absolute_percentage_error", {}, ONE),
    ("weighted_mean_absolute_percentage_error", {}, ONE),
    *[("tweedie_deviance_score", {"power": power}, POSITIVE) for power in (0.0, 1, 1.5, 2, 3, -0.5)],
    ("critical_success_index", {"threshold": 0.5}, THREE),
    ("critical_success_index", {"threshold": 0.5, "keep_sequence_dim": 1}, THREE),
    *[
        (n, {"log_prob": lp, "reduction": r}, LOG_DIST if lp else DIST)
        for n in ("kl_divergence", "jensen_shannon_divergence")
        for lp in (False, True)
        for r in ("mean", "sum", None)
    ],
]


@pytest.mark.parametrize("name, kwargs, data", FUNCTIONAL, ids=lambda x: str(x) if not isinstance(x, tuple) else "")
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_functional_forms_as_torchmetrics(name, kwargs, data, dtype):
    args = tuple(x.to(dtype) for x in data)
    got, want = getattr(F, name)(*args, **kwargs), getattr(tmf, name)(*args, **kwargs)
    assert getattr(FR, name) is getattr(F, name)
    assert got.dtype == want.dtype and got.shape == want.shape, (got, want)
    torch.testing.assert_close(got, want, rtol=1e-5 if dtype == torch.float32 else 1e-10, atol=1e-6)


@pytest.mark.parametrize(
    "factory",
    [
        LogCoshError,
        MeanSquaredLogError,
        P(MinkowskiDistance, p=2),
        NormalizedRootMeanSquaredError,
        P(NormalizedRootMeanSquaredError, normalization="range"),
        RelativeSquaredError,
        SymmetricMeanAbsolutePercentageError,
        WeightedMeanAbsolutePercentageError,
        TweedieDevianceScore,
        P(CriticalSuccessIndex, 0.5),
    ],
)
def test_no_samples_give_torchmetrics_value(factory):
    ours = factory().update(torch.empty(0), torch.empty(0)).compute()
    name = (factory.func if isinstance(factory, P) else factory).__name__
    theirs = getattr(torchmetrics.regression, name)(*getattr(factory, "args", ()), **getattr(factory, "keywords", {}))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if name != "NormalizedRootMeanSquaredError":  # theirs: min of nothing raises
            theirs.update(torch.empty(0), torch.empty(0))
        want = theirs.compute()
    torch.testing.assert_close(ours, want.reshape(ours.shape), equal_nan=True)


def test_forward_returns_the_batch_value_and_accumulates():
    for make, data in (
        (P(NormalizedRootMeanSquaredError, normalization="range"), ONE),
        (P(NormalizedRootMeanSquaredError, normalization="std"), ONE),
        (P(KLDivergence, reduction="none"), DIST),
        (P(CriticalSuccessIndex, 0.0), ONE),
    ):
        m, one = make(), make()
        for batch in split(*data)[:3]:
            if batch[0].numel():
                torch.testing.assert_close(m(*batch), make().update(*batch).compute(), equal_nan=True)
                one.update(*batch)
        torch.testing.assert_close(m.compute(), one.compute())


# -- exact where torchmetrics loses digits -------------------------------------------------------


def test_rse_and_nrmse_std_at_a_large_offset_are_exact():
    preds, target = BIG  # mean 1e6, spread 1
    want_rse, want_nrmse = rse_ref(True)(preds, target), nrmse_ref("std")(preds, target)
    theirs = torchmetrics.regression.RelativeSquaredError()
    torch.set_default_dtype(torch.float64)
    try:
        ours_rse, ours_nrmse = RelativeSquaredError(), NormalizedRootMeanSquaredError(normalization="std")
        theirs = torchmetrics.regression.RelativeSquaredError()  # float64 raw sums of squares
    finally:
        torch.set_default_dtype(torch.float32)
    for batch in split(preds, target):
        ours_rse.update(*batch)
        ours_nrmse.update(*batch)
        theirs.update(*batch)
    assert abs(float(ours_rse.compute()) / want_rse - 1) < 1e-9
    assert abs(float(ours_nrmse.compute()) / want_nrmse - 1) < 1e-9
    assert abs(float(theirs.compute()) / want_rse - 1) > 1e-7


def test_log_cosh_keeps_large_and_small_errors():
    preds = torch.tensor([100.0, 1e-5, -200.0])
    target = torch.zeros(3)
    got = LogCoshError().update(preds, target).compute()
    want = np.mean([100 - np.log(2), 0.5e-10, 200 - np.log(2)])
    assert float(got) == pytest.approx(want, rel=1e-6)
    assert torch.isinf(tmf.log_cosh_error(preds, target))  # float32 exp overflows
    assert float(F.log_cosh_error(preds[1:2].double(), target[1:2].double())) == pytest.approx(0.5e-10, rel=1e-9)


def test_a_constant_target_clamps_as_torchmetrics_a_small_one_does_not():
    const = (torch.tensor([1.0, 2.0, 3.0]), torch.full((3,), 2.0))
    torch.testing.assert_close(
        RelativeSquaredError().update(*const).compute(), torchmetrics.regression.RelativeSquaredError()(*const)
    )
    small = (torch.tensor([1e-5, 2e-5, 3e-5], dtype=torch.float64), torch.tensor([1.5e-5, 2e-5, 2.5e-5]).double())
    assert float(F.relative_squared_error(*small)) == pytest.approx(rse_ref(True)(*small), rel=1e-9)


# -- bad input: clear errors, state unchanged --------------------------------------------------

NAN = torch.tensor([1.0, float("nan"), 2.0, 3.0])
GOOD = (torch.rand(4) + 0.5, torch.rand(4) + 0.5)
GOOD2 = (torch.rand(4, 2) + 0.5, torch.rand(4, 2) + 0.5)
GOOD3 = (torch.rand(2, 4, 2), torch.rand(2, 4, 2))


@pytest.mark.parametrize(
    "factory, good, args, exc, match",
    [
        (LogCoshError, GOOD, (NAN, GOOD[1]), ValueError, r"preds: expected finite values, got nan at flat index 1"),
        (P(LogCoshError, num_outputs=2), GOOD2, GOOD, ValueError, r"preds: expected shape \[N, 2\]"),
        (MeanSquaredLogError, GOOD, (GOOD[0], -1.5 * GOOD[1]), ValueError, r"target: expected values > -1"),
        (MeanSquaredLogError, GOOD, (GOOD[0] - 3, GOOD[1]), ValueError, r"preds: expected values > -1"),
        (P(MinkowskiDistance, p=3), GOOD, (GOOD[0], NAN), ValueError, r"targets: expected finite values"),
        (NormalizedRootMeanSquaredError, GOOD, (GOOD[0], GOOD[1][:3]), ValueError, r"target: expected the shape"),
        (
            P(NormalizedRootMeanSquaredError, normalization="range"),
            GOOD,
            (GOOD[0], torch.tensor([1.0, 2.0, float("inf"), 0.0])),
            ValueError,
            r"target: expected finite values, got inf at flat index 2",
        ),
        (
            P(NormalizedRootMeanSquaredError, normalization="std"),
            GOOD,
            (NAN, NAN),
            ValueError,
            "preds: expected finite",
        ),
        (RelativeSquaredError, GOOD, GOOD2, ValueError, r"for 2 outputs pass num_outputs=2"),
        (RelativeSquaredError, GOOD, (GOOD[0], NAN), ValueError, r"target: expected finite values"),
        (SymmetricMeanAbsolutePercentageError, GOOD, (GOOD[0] > 1, GOOD[1]), TypeError, r"preds: expected a floating"),
        (WeightedMeanAbsolutePercentageError, GOOD, ([1.0] * 4, GOOD[1]), TypeError, r"preds: expected a tensor"),
        (P(TweedieDevianceScore, power=1), GOOD, (GOOD[0] - 2, GOOD[1]), ValueError, r"preds: expected values > 0"),
        (P(TweedieDevianceScore, power=1.5), GOOD, (GOOD[0], -GOOD[1]), ValueError, r"targets: expected values >= 0"),
        (P(TweedieDevianceScore, power=3), GOOD, (GOOD[0], 0 * GOOD[1]), ValueError, r"targets: expected values > 0"),
        (P(TweedieDevianceScore, power=-1), GOOD, (-GOOD[0], GOOD[1]), ValueError, r"preds: expected values > 0"),
        (P(CriticalSuccessIndex, 0.5), GOOD, (GOOD[0], NAN), ValueError, r"target: expected finite values"),
        (P(CriticalSuccessIndex, 0.5, keep_sequence_dim=2), GOOD3, GOOD2, ValueError, r"keep_sequence_dim: expected"),
        (KLDivergence, GOOD2, GOOD, ValueError, r"p: expected shape \[N, d\]"),
        (KLDivergence, GOOD2, (GOOD2[0], -GOOD2[1]), ValueError, r"q: expected probabilities >= 0, got -"),
        (KLDivergence, GOOD2, (GOOD2[0] * 0, GOOD2[1]), ValueError, r"p: expected rows with a positive sum"),
        (
            P(JensenShannonDivergence, log_prob=True),
            GOOD2,
            (GOOD2[0], torch.tensor([[0.0, float("-inf")]] * 4)),
            ValueError,
            r"q: expected finite values, got -inf at flat index 1",
        ),
        (
            P(JensenShannonDivergence, reduction="none"),
            GOOD2,
            (GOOD2[0], GOOD2[1].to(torch.complex64)),
            TypeError,
            "q:",
        ),
    ],
)
def test_bad_input_is_rejected_and_state_kept(factory, good, args, exc, match):
    metric = factory().update(*good)
    before = metric.compute()
    assert_rejects(metric, args, exc, match)
    torch.testing.assert_close(metric.compute(), before)


def test_kl_of_a_zero_in_q_is_inf_as_torchmetrics():
    p, q = torch.tensor([[0.5, 0.5]]), torch.tensor([[1.0, 0.0]])
    assert torch.isinf(KLDivergence().update(p, q).compute()) and torch.isinf(tmf.kl_divergence(p, q))


@pytest.mark.parametrize(
    "factory, exc, match",
    [
        (P(LogCoshError, num_outputs=0), ValueError, "num_outputs: expected a positive int"),
        (P(NormalizedRootMeanSquaredError, normalization="max"), ValueError, "normalization: expected one of"),
        (P(NormalizedRootMeanSquaredError, num_outputs=1.5), ValueError, "num_outputs"),
        (P(RelativeSquaredError, num_outputs=-1), ValueError, "num_outputs"),
        (P(RelativeSquaredError, squared=1), ValueError, "squared"),
        (P(MinkowskiDistance, p=0.5), ValueError, "p: expected a finite number >= 1"),
        (P(MinkowskiDistance, p=float("inf")), ValueError, "p: expected a finite number >= 1"),
        (P(MinkowskiDistance, p="2"), ValueError, "p: expected a real number"),
        (
            P(TweedieDevianceScore, power=0.5),
            ValueError,
            "power: expected .*Deviance Score is not defined for power=0.5",
        ),
        (P(CriticalSuccessIndex, float("nan")), ValueError, "threshold: expected a real number"),
        (P(CriticalSuccessIndex, 0.5, keep_sequence_dim=-1), ValueError, "keep_sequence_dim"),
        (P(KLDivergence, reduction="max"), ValueError, "reduction: expected one of"),
        (P(JensenShannonDivergence, log_prob="yes"), TypeError, "log_prob: expected a bool"),
    ],
)
def test_bad_options(factory, exc, match):
    with pytest.raises(exc, match=match):
        factory()


@pytest.mark.parametrize("package", ["torchtally.regression", "torchtally.functional.regression"])
def test_doc_examples(package):
    failed, attempted = package_doctests(package)
    assert attempted > 10 and failed == 0, package


@pytest.mark.parametrize(
    "power, preds, words",
    [
        (1, [-1.0, 2.0], "For power=1, 'preds' has to be strictly positive and 'targets' cannot be negative."),
        (2, [-1.0, 2.0], "For power=2, both 'preds' and 'targets' have to be strictly positive."),
        (-1, [0.0, 2.0], "For power=-1, 'preds' has to be strictly positive."),
    ],
)
def test_tweedie_domain_error_names_the_argument_and_keeps_torchmetrics_words(power, preds, words):
    metric = TweedieDevianceScore(power=power)
    with pytest.raises(ValueError, match="preds: expected values > 0") as raised:
        metric.update(torch.tensor(preds), torch.tensor([1.0, 1.0]))
    assert words in str(raised.value)


def test_float16_with_bfloat16_in_one_batch_gives_torchs_promotion():
    # the result follows torch's promotion of the inputs: float16 with bfloat16 is float32
    p, q = torch.rand(6, 3).softmax(-1), torch.rand(6, 3).softmax(-1)
    metric = KLDivergence(reduction="none")
    metric.update(p.half(), q.bfloat16())
    assert metric.compute().dtype == torch.float32
