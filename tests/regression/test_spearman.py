"""ConcordanceCorrCoef, SpearmanCorrCoef, KendallRankCorrCoef and ContinuousRankedProbabilityScore
against scipy.stats (spearmanr, kendalltau with its variants and asymptotic test), brute-force
pair counts and the CRPS definition, through the shared tester (one process and 3 gloo ranks
with uneven shards, one empty), side by side with torchmetrics (classes and functional forms),
and their bad inputs and options."""

import functools
import time
import warnings

import numpy as np
import pytest
import scipy.stats
import torch
import torchmetrics
import torchmetrics.functional.regression as tmf
from support.metric_tester import CollectionFactory, MetricCase, assert_rejects, check_metric, run_distributed_cases
from support.parity_tester import ParityCase, assert_parity, check_parity
from support.regression_cases import F64, make_data, split

import torchtally
import torchtally.functional as ttf
from torchtally import MetricCollection
from torchtally import regression as ttr
from torchtally.regression import (
    ConcordanceCorrCoef,
    ContinuousRankedProbabilityScore,
    KendallRankCorrCoef,
    PearsonCorrCoef,
    SpearmanCorrCoef,
)

P = functools.partial
G = torch.Generator().manual_seed(11)
N = 46  # split() cuts 46 samples into uneven batches, one empty


def _ties(d=None):
    """Small integers as float32: many ties in both preds and target, correlated."""
    shape = (N,) if d is None else (N, d)
    preds = torch.randint(0, 8, shape, generator=G)
    target = preds // 2 + torch.randint(0, 3, shape, generator=G)
    return preds.float(), target.float()


TIES, TIES3 = _ties(), _ties(3)
ONE, THREE = make_data(seed=7), make_data(d=3, seed=8)  # float64, continuous
ENSEMBLE = (
    torch.randn(N, 5, generator=G, dtype=torch.float64) * 2 + 1,
    torch.randn(N, generator=G, dtype=torch.float64),
)


def _columns(p, t):
    p, t = p.double().numpy(), t.double().numpy()
    return (p, t) if p.ndim == 2 else (p[:, None], t[:, None])


def _per_column(fn, p, t, squeeze=True):
    p, t = _columns(p, t)
    out = np.array([fn(p[:, i], t[:, i]) for i in range(p.shape[1])])
    return out[0] if squeeze and out.shape[0] == 1 else out


def spearman_ref(p, t):
    return _per_column(lambda x, y: scipy.stats.spearmanr(x, y).statistic, p, t)


def kendall_ref(variant, alternative=None):
    def one(x, y):
        res = scipy.stats.kendalltau(x, y, variant=variant, method="asymptotic", alternative=alternative or "two-sided")
        return (res.statistic, res.pvalue)

    def ref(p, t):
        out = _per_column(one, p, t, squeeze=False)
        tau, pv = (out[0, 0], out[0, 1]) if out.shape[0] == 1 else (out[:, 0], out[:, 1])
        return tau if alternative is None else (tau, pv)

    return ref


def kendall_a_ref(alternative):
    """Variant "a" as torchmetrics defines it, (C - D) / (C + D), and its no-ties test, from
    every pair counted by brute force."""

    def one(x, y):
        signs = np.sign(x[:, None] - x[None, :]) * np.sign(y[:, None] - y[None, :])
        upper = signs[np.triu_indices(x.size, 1)]
        c, d = (upper > 0).sum(), (upper < 0).sum()
        n = x.size
        z = 3 * (c - d) / np.sqrt(n * (n - 1) * (2 * n + 5) / 2)
        p = {"two-sided": 2 * scipy.stats.norm.sf(abs(z)), "greater": scipy.stats.norm.sf(z)}[alternative]
        return (c - d) / (c + d), p

    def ref(p, t):
        out = _per_column(one, p, t, squeeze=False)
        return (out[0, 0], out[0, 1]) if out.shape[0] == 1 else (out[:, 0], out[:, 1])

    return ref


def ccc_ref(p, t):
    """Lin's coefficient from Pearson's r and the sample (ddof=1) variances, as torchmetrics."""

    def one(x, y):
        r = scipy.stats.pearsonr(x, y).statistic
        vx, vy = x.var(ddof=1), y.var(ddof=1)
        return 2 * r * np.sqrt(vx * vy) / (vx + vy + (x.mean() - y.mean()) ** 2)

    return _per_column(one, p, t)


def crps_ref(preds, target):
    """The definition, every member pair included (O(M^2) per sample)."""
    x, y = preds.double().numpy(), target.double().numpy()
    m = x.shape[1]
    error = np.abs(x - y[:, None]).mean(1)
    spread = np.abs(x[:, :, None] - x[:, None, :]).sum((1, 2)) / (2 * m * m)
    return (error - spread).mean()


def case(name, factory, data, reference, rtol=1e-10, atol=1e-12):
    return MetricCase(name, factory, split(*data), reference, rtol=rtol, atol=atol)


F32 = dict(rtol=2e-6, atol=1e-7)  # results in the default float32
CASES = [
    case("spearman_ties", SpearmanCorrCoef, TIES, spearman_ref, **F32),
    case("spearman_3_outputs_ties", P(SpearmanCorrCoef, num_outputs=3), TIES3, spearman_ref, **F32),
    case("spearman_float64", F64(SpearmanCorrCoef), ONE, spearman_ref),
    case("kendall_b_ties", KendallRankCorrCoef, TIES, kendall_ref("b"), **F32),
    case(
        "kendall_c_test_3_outputs",
        F64(KendallRankCorrCoef, "c", True, num_outputs=3),
        TIES3,
        kendall_ref("c", "two-sided"),
    ),
    case(
        "kendall_b_test_less", F64(KendallRankCorrCoef, t_test=True, alternative="less"), ONE, kendall_ref("b", "less")
    ),
    case("kendall_a_test_greater", F64(KendallRankCorrCoef, "a", True, "greater"), TIES, kendall_a_ref("greater")),
    case("kendall_a_3_outputs", F64(KendallRankCorrCoef, "a", True, num_outputs=3), TIES3, kendall_a_ref("two-sided")),
    case("concordance", F64(ConcordanceCorrCoef), ONE, ccc_ref),
    case("concordance_3_outputs", P(ConcordanceCorrCoef, num_outputs=3), THREE, ccc_ref),  # float64 inputs
    case("concordance_ties_float32", ConcordanceCorrCoef, TIES, ccc_ref, **F32),
    case("crps", F64(ContinuousRankedProbabilityScore), ENSEMBLE, crps_ref),
    case("crps_float32_result", ContinuousRankedProbabilityScore, ENSEMBLE, crps_ref, **F32),
    case(
        "collection_shared_states",
        CollectionFactory(
            spearman=F64(SpearmanCorrCoef),
            kendall=F64(KendallRankCorrCoef),
            pearson=F64(PearsonCorrCoef),
            concordance=F64(ConcordanceCorrCoef),
        ),
        ONE,
        lambda p, t: {
            "spearman": spearman_ref(p, t),
            "kendall": kendall_ref("b")(p, t),
            "pearson": scipy.stats.pearsonr(*_columns(p, t)[0].T, *_columns(p, t)[1].T).statistic,
            "concordance": ccc_ref(p, t),
        },
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_lifecycle_and_reference(case):
    check_metric(case)


@pytest.mark.distributed
def test_all_cases_on_three_ranks():
    run_distributed_cases(CASES, world_size=3)


# -- side by side with torchmetrics ------------------------------------------------------------

CLASSES = ["ConcordanceCorrCoef", "SpearmanCorrCoef", "KendallRankCorrCoef", "ContinuousRankedProbabilityScore"]
FUNCTIONS = [
    "concordance_corrcoef",
    "spearman_corrcoef",
    "kendall_rank_corrcoef",
    "continuous_ranked_probability_score",
]


def _parameters(fn):
    import inspect

    return [(p.name, p.kind, p.default) for p in inspect.signature(fn).parameters.values()]


@pytest.mark.parametrize("name", CLASSES)
def test_class_signature_and_attributes(name):
    ours, theirs = getattr(ttr, name), getattr(torchmetrics.regression, name)
    assert _parameters(ours.__init__) == _parameters(theirs.__init__)
    assert getattr(torchtally, name) is ours
    assert ours.higher_is_better == theirs.higher_is_better
    assert ours.full_state_update == theirs.full_state_update
    assert ours.is_differentiable is False


@pytest.mark.parametrize("name", FUNCTIONS)
def test_functional_signature(name):
    assert _parameters(getattr(ttf, name)) == _parameters(getattr(tmf, name))


def _batches(data, sizes=(7, 13, 5, 9)):
    out, lo = [], 0
    for size in sizes:
        out.append(tuple(x[lo : lo + size] for x in data))
        lo += size
    return out


def parity(name, ours, theirs, data, rtol=2e-5, atol=2e-6):
    return ParityCase(name, ours, theirs, _batches(data), rtol=rtol, atol=atol)


TM = torchmetrics.regression
PARITY = [
    parity("spearman", SpearmanCorrCoef, TM.SpearmanCorrCoef, TIES),
    parity("spearman_3", P(SpearmanCorrCoef, num_outputs=3), P(TM.SpearmanCorrCoef, num_outputs=3), TIES3),
    parity("kendall_b", KendallRankCorrCoef, TM.KendallRankCorrCoef, TIES),
    parity(
        "kendall_c_test_3",
        P(KendallRankCorrCoef, "c", True, "less", num_outputs=3),
        P(TM.KendallRankCorrCoef, "c", True, "less", num_outputs=3),
        TIES3,
    ),
    parity("kendall_a_test", P(KendallRankCorrCoef, "a", True), P(TM.KendallRankCorrCoef, "a", True), TIES),
    parity("concordance", ConcordanceCorrCoef, TM.ConcordanceCorrCoef, TIES),
    parity(
        "concordance_3_float64", P(ConcordanceCorrCoef, num_outputs=3), P(TM.ConcordanceCorrCoef, num_outputs=3), THREE
    ),
    parity(
        "crps",
        ContinuousRankedProbabilityScore,
        TM.ContinuousRankedProbabilityScore,
        tuple(x.float() for x in ENSEMBLE),
    ),
]


@pytest.mark.parametrize("case", PARITY, ids=lambda c: c.name)
def test_parity_with_torchmetrics(case):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_parity(case)


FUNCTIONAL_INPUTS = {
    "ties": TIES,
    "ties_3": TIES3,
    "float64": ONE,
    "float64_3": THREE,
    "float16": tuple(x.half() for x in TIES),
}


@pytest.mark.parametrize("inputs", sorted(FUNCTIONAL_INPUTS))
@pytest.mark.parametrize(
    "name, kwargs",
    [
        ("concordance_corrcoef", {}),
        ("spearman_corrcoef", {}),
        ("kendall_rank_corrcoef", {}),
        ("kendall_rank_corrcoef", dict(variant="c", t_test=True, alternative="greater")),
        ("kendall_rank_corrcoef", dict(variant="a", t_test=True)),
    ],
)
def test_functional_forms_as_torchmetrics(name, kwargs, inputs):
    preds, target = FUNCTIONAL_INPUTS[inputs]
    ours = getattr(ttf, name)(preds, target, **kwargs)
    theirs = getattr(tmf, name)(preds, target, **kwargs)
    loose = inputs == "float16"  # torchmetrics computes CCC and tau-c in float16; torchtally rounds once
    assert_parity(ours, theirs, f"{name}{kwargs} on {inputs}", rtol=1e-2 if loose else 2e-5, atol=2e-6)


@pytest.mark.parametrize("dtype", [torch.float16, torch.float32, torch.float64, torch.int64])
def test_crps_functional_as_torchmetrics(dtype):
    preds, target = (x[:20] * 3 for x in ENSEMBLE)
    preds, target = preds.to(dtype), target.to(dtype)
    ours, theirs = (
        ttf.continuous_ranked_probability_score(preds, target),
        tmf.continuous_ranked_probability_score(preds, target),
    )
    assert_parity(ours, theirs, str(dtype), rtol=2e-3 if dtype == torch.float16 else 1e-6, atol=1e-6)
    assert float(ours) == pytest.approx(crps_ref(preds, target), rel=1e-6 if dtype != torch.float16 else 1e-3)


# -- the deliberate differences and the state ---------------------------------------------------


def test_spearman_is_exact_where_torchmetrics_adds_an_eps():
    p, t = torch.tensor([1.0, 2.0, 3.0]), torch.tensor([10.0, 20.0, 30.0])
    assert float(SpearmanCorrCoef().update(p, t).compute()) == 1.0
    assert float(tmf.spearman_corrcoef(p, t)) < 1.0  # 0.99999..., the eps
    with pytest.warns(UserWarning, match="spearman: output\\(s\\) \\[0\\] have constant preds"):
        assert torch.isnan(ttf.spearman_corrcoef(torch.ones(4), torch.arange(4.0)))
    assert float(tmf.spearman_corrcoef(torch.ones(4), torch.arange(4.0))) == 0.0  # torchmetrics' value


def test_float64_inputs_rounded_into_float32_pairs_warn_and_float64_pairs_stay_exact():
    p = torch.tensor([1.0, 1.0 + 1e-12, 2.0, 3.0], dtype=torch.float64)  # 1 + 1e-12 rounds to 1 in float32
    t = torch.tensor([1.0, 2.0, 3.0, 4.0], dtype=torch.float64)
    with pytest.warns(UserWarning, match="kept as float32 pairs"):
        rounded = SpearmanCorrCoef().update(p, t).compute()
    exact = F64(SpearmanCorrCoef)().update(p, t).compute()
    assert float(exact) == pytest.approx(1.0) and float(rounded) < 0.99
    assert F64(SpearmanCorrCoef)().pairs.dtype == torch.float64 and SpearmanCorrCoef().pairs.dtype == torch.float32
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        SpearmanCorrCoef().update(p.float().double(), t)  # float64 values float32 holds: no warning


def test_finite_pairs_whose_sum_overflows_are_kept_and_any_nan_or_inf_refused():
    """The batch's finite check is a sum with an exact search behind it: finite values that sum
    to inf are stored; a NaN or inf anywhere (even inf and -inf, whose sum is NaN) is refused."""
    big = torch.tensor([3e38, 3e38, -3e38, -3e38, 1.0])
    m = SpearmanCorrCoef()
    m.update(big, torch.arange(5.0))
    assert m.pairs[:, 0, 0].tolist() == big.tolist()
    for preds, target, name in [
        (torch.tensor([1.0, float("inf"), -float("inf")]), torch.ones(3), "preds"),
        (torch.ones(3), torch.tensor([0.0, 2.0, NAN]), "target"),
    ]:
        assert_rejects(m, (preds, target), ValueError, f"{name}: expected finite")


def test_rank_metrics_share_the_pairs_and_pearson_concordance_the_comoments():
    c = MetricCollection(
        {"s": SpearmanCorrCoef(), "k": KendallRankCorrCoef(), "p": PearsonCorrCoef(), "c": ConcordanceCorrCoef()}
    )
    assert sorted(map(sorted, c.compute_groups.values())) == [["c", "p"], ["k", "s"]]
    c.update(*TIES)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = c.compute()
    torch.testing.assert_close(got["s"].double(), torch.tensor(spearman_ref(*TIES)), rtol=2e-6, atol=0)
    torch.testing.assert_close(got["c"].double(), torch.tensor(ccc_ref(*TIES)), rtol=2e-6, atol=0)
    assert c["s"].pairs.shape == (N, 2, 1) and c["s"].pairs.dtype == torch.float32  # 8 bytes per sample


def test_kendall_is_n_log_n():
    """200k samples with ties: scipy's tau and p-value (torchmetrics compares every pair)."""
    g = torch.Generator().manual_seed(3)
    x = torch.randint(0, 1000, (200_000,), generator=g).float()
    y = x + torch.randint(0, 500, (200_000,), generator=g).float()
    start = time.perf_counter()
    tau, p = ttf.kendall_rank_corrcoef(x, y, t_test=True)
    assert time.perf_counter() - start < 20
    res = scipy.stats.kendalltau(x.numpy(), y.numpy(), method="asymptotic")
    assert float(tau) == pytest.approx(res.statistic, rel=1e-6) and float(p) == pytest.approx(res.pvalue, abs=1e-12)


def test_no_samples():
    for cls in (SpearmanCorrCoef, KendallRankCorrCoef):
        with pytest.raises(ValueError, match="No samples to concatenate"):
            cls().update(torch.empty(0), torch.empty(0)).compute()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert torch.isnan(ContinuousRankedProbabilityScore().compute())
        assert torch.isnan(ConcordanceCorrCoef().compute())
        assert torch.isnan(ttf.continuous_ranked_probability_score(torch.empty(0, 3), torch.empty(0)))
    with pytest.raises(ValueError, match="No samples"):
        ttf.kendall_rank_corrcoef(torch.empty(0), torch.empty(0))


def test_crps_state_is_two_numbers():
    m = ContinuousRankedProbabilityScore().update(*ENSEMBLE)
    assert {k: (v.dtype, tuple(v.shape)) for k, v in m.metric_state.items()} == {
        "score_sum": (torch.float64, ()),
        "num_samples": (torch.int64, ()),
    }


# -- bad input and options ---------------------------------------------------------------------

NAN = float("nan")


@pytest.mark.parametrize(
    "factory, args, exc, match",
    [
        (SpearmanCorrCoef, (torch.tensor([1.0, NAN, 2.0]), torch.ones(3)), ValueError, r"preds: expected finite"),
        (
            KendallRankCorrCoef,
            (torch.ones(3), torch.tensor([1.0, 2.0, float("inf")])),
            ValueError,
            r"target: expected finite",
        ),
        (SpearmanCorrCoef, (torch.ones(3), torch.ones(4)), ValueError, r"target: expected the shape of preds"),
        (KendallRankCorrCoef, (torch.ones(3, 2, 2), torch.ones(3, 2, 2)), ValueError, r"preds: expected shape \[N\]"),
        (
            P(SpearmanCorrCoef, num_outputs=2),
            (torch.ones(3), torch.ones(3)),
            ValueError,
            r"preds: expected shape \[N, 2\]",
        ),
        (KendallRankCorrCoef, (torch.ones(3, 2), torch.ones(3, 2)), ValueError, r"num_outputs=2"),
        (
            SpearmanCorrCoef,
            (torch.ones(3, dtype=torch.complex64), torch.ones(3)),
            TypeError,
            r"preds: expected a floating",
        ),
        (
            SpearmanCorrCoef,
            (torch.tensor([1.0, 1e300], dtype=torch.float64), torch.ones(2)),
            ValueError,
            r"preds: the value 1e\+300 at flat index 1 does not fit the torch.float32 state",
        ),
        (ConcordanceCorrCoef, (torch.tensor([1.0, NAN]), torch.ones(2)), ValueError, r"preds: expected finite"),
        (
            ContinuousRankedProbabilityScore,
            (torch.ones(4, 1), torch.ones(4)),
            ValueError,
            r"preds: expected at least 2 ensemble members.*CRPS requires at least 2 ensemble members, but",
        ),
        (
            ContinuousRankedProbabilityScore,
            (torch.ones(4), torch.ones(4)),
            ValueError,
            r"preds: expected an ensemble forecast of shape \[N, M\]",
        ),
        (
            ContinuousRankedProbabilityScore,
            (torch.ones(4, 3), torch.ones(4, 1)),
            ValueError,
            r"target: expected shape \[4\]",
        ),
        (
            ContinuousRankedProbabilityScore,
            (torch.ones(4, 3), torch.ones(3)),
            RuntimeError,
            r"target: expected shape \[4\]",
        ),
        (
            ContinuousRankedProbabilityScore,
            (torch.full((2, 3), NAN), torch.ones(2)),
            ValueError,
            r"preds: expected finite",
        ),
        (
            ContinuousRankedProbabilityScore,
            (torch.ones(2, 3), torch.ones(2, device="meta")),
            ValueError,
            r"target: expected a tensor on cpu",
        ),
    ],
)
def test_bad_input_is_rejected_and_state_kept(factory, args, exc, match):
    metric = factory()
    good = ENSEMBLE if factory is ContinuousRankedProbabilityScore else tuple(x[:, :2] for x in TIES3)
    if factory is not ContinuousRankedProbabilityScore and getattr(metric, "num_outputs", 1) == 1:
        good = TIES
    metric.update(*good)
    assert_rejects(metric, args, exc, match)


@pytest.mark.parametrize(
    "factory, match",
    [
        (P(KendallRankCorrCoef, variant="d"), "variant: expected one of"),
        (P(KendallRankCorrCoef, t_test="yes"), "t_test: expected a bool"),
        (P(KendallRankCorrCoef, t_test=True, alternative=None), "alternative: required with t_test=True"),
        (P(KendallRankCorrCoef, t_test=True, alternative="both"), "alternative: expected one of"),
        (P(SpearmanCorrCoef, num_outputs=0), "num_outputs: expected a positive int"),
        (P(ConcordanceCorrCoef, num_outputs=0), "num_outputs: expected a positive int"),
    ],
)
def test_bad_options(factory, match):
    with pytest.raises(ValueError, match=match):
        factory()
    assert KendallRankCorrCoef(alternative="both").alternative is None  # not read without a test, as torchmetrics


def test_functional_forms_check_their_inputs():
    with pytest.raises(ValueError, match="variant"):
        ttf.kendall_rank_corrcoef(*TIES, variant="x")
    with pytest.raises(ValueError, match="preds: expected finite"):
        ttf.spearman_corrcoef(torch.tensor([NAN, 1.0]), torch.ones(2))
    with pytest.raises(ValueError, match="target: expected shape \\[3\\]"):
        ttf.continuous_ranked_probability_score(torch.ones(3, 2), torch.ones(2))
    with pytest.raises(TypeError, match="target: expected a floating or integer tensor"):
        ttf.concordance_corrcoef(torch.ones(3), torch.ones(3, dtype=torch.complex64))


def test_a_loaded_pairs_state_is_checked():
    m = SpearmanCorrCoef()
    m.persistent(True)
    bad = torch.tensor([[[1.0], [NAN]]])
    with pytest.raises(ValueError, match="'pairs': NaN or inf"):
        m.load_state_dict({"pairs": bad})
    assert m.pairs.shape == (0, 2, 1)
