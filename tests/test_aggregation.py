"""Aggregation metrics against numpy, the NaN policy, the running window, edge cases and bad
input. CASES also run through the shared tester (metric_tester); their 3-rank distributed check
is in test_regression_aggregation_distributed.py. Parity with torchmetrics over the argument
grid is in test_regagg_torchmetrics_parity.py."""
import functools
import warnings

import numpy as np
import pytest
import torch

from metric_tester import MetricCase, assert_rejects, check_metric
from torchtally import NotComputableError
from torchtally.aggregation import AverageLoss, CatMetric, MaxMetric, MeanMetric, MinMetric, RunningMean, SumMetric
from torchtally.functional import weighted_mean, weighted_sum
from torchtally.functional.aggregation import NaNValueError

P = functools.partial
NAN = float("nan")
G = torch.Generator().manual_seed(0)
SHAPES = [(3, 2), (0,), (5,), (1, 4), (7,), (2, 2), (4,)]  # 7 batches, one empty, mixed ranks
VALUES = [torch.randn(s, generator=G, dtype=torch.float64) * 10 + 1e6 for s in SHAPES]
WEIGHTS = [torch.rand(s, generator=G, dtype=torch.float64) for s in SHAPES]
WITH_NAN = [v.clone() for v in VALUES]
WITH_NAN[0][1, 0] = WITH_NAN[4][2] = WITH_NAN[4][5] = NAN
INTS = [torch.randint(-50, 50, s, generator=G) for s in SHAPES]
ROWS = [torch.randn(n, 3, generator=G, dtype=torch.float64) for n in (4, 0, 2, 5, 1)]  # CatMetric keeps [N, 3]
LOSSES = [(torch.rand((), generator=G) * 3, n) for n in (32, 32, 32, 7)]  # short last batch
SAMPLE_LOSSES = [torch.rand(n, generator=G) for n in (5, 0, 8, 3)]


def float64_metric(factory, *args, **kwargs):
    """factory(*args, **kwargs) made while torch's default dtype is float64, so its results are
    float64 (as a torchmetrics metric made then); picklable through functools.partial."""
    previous = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        return factory(*args, **kwargs)
    finally:
        torch.set_default_dtype(previous)


F64 = functools.partial(P, float64_metric)  # F64(SumMetric, nan_strategy="ignore")


def flat(batches, index=0):
    """Every batch's argument ``index`` flattened and joined, as float64 numpy."""
    return np.concatenate([np.asarray(b[index], dtype=np.float64).reshape(-1) for b in batches] + [np.empty(0)])


def ref_sum(batches):
    return flat(batches).sum()


def ref_nansum(batches):
    return np.nansum(flat(batches))


def ref_mean(batches):
    values = flat(batches)
    if len(batches[0]) == 1:
        return values.mean()
    weights = np.concatenate([np.broadcast_to(np.asarray(b[1], dtype=np.float64), np.shape(b[0])).reshape(-1)
                              for b in batches])
    return (values * weights).sum() / weights.sum()


def ref_nanmean(batches):
    return np.nanmean(flat(batches))


def ref_loss(batches):
    losses = np.array([float(b[0]) for b in batches])
    sizes = np.array([b[1] for b in batches], dtype=np.float64)
    return (losses * sizes).sum() / sizes.sum()


def running_ref(window):
    """The union of every part's last ``window`` batches, as a (weighted) mean."""
    def ref(shards):
        kept = [batch for shard in shards for batch in shard[-window:]]
        return ref_mean(kept)
    return ref


def case(name, factory, batches, reference, rtol=1e-12, atol=1e-9, **kw):
    return MetricCase(name, factory, batches, reference, reference_on_batches=True, rtol=rtol, atol=atol, **kw)


def one(values):
    return [(v,) for v in values]


CASES = [
    case("sum", F64(SumMetric), one(VALUES), ref_sum),
    case("sum_float32_result", SumMetric, one(VALUES), ref_sum, rtol=1e-7),
    case("sum_python_numbers", F64(SumMetric), one([1.5, -2, 3.25, 1e6]), ref_sum),
    case("sum_ints", F64(SumMetric), one(INTS), ref_sum),
    case("sum_nan_ignore", F64(SumMetric, nan_strategy="ignore"), one(WITH_NAN), ref_nansum),
    case("sum_nan_as_zero_point_five", F64(SumMetric, nan_strategy=0.5), one(WITH_NAN),
         lambda b: np.nan_to_num(flat(b), nan=0.5).sum()),
    case("mean", F64(MeanMetric), one(VALUES), ref_mean),
    case("mean_weighted", F64(MeanMetric), list(zip(VALUES, WEIGHTS)), ref_mean),
    case("mean_scalar_weight", F64(MeanMetric), [(v, float(i + 1)) for i, v in enumerate(VALUES)], ref_mean),
    case("mean_nan_ignore", F64(MeanMetric, nan_strategy="ignore"), one(WITH_NAN), ref_nanmean),
    case("mean_float32_result", MeanMetric, list(zip(VALUES, WEIGHTS)), ref_mean, rtol=1e-7),
    case("min", F64(MinMetric), one(VALUES), lambda b: flat(b).min()),
    case("min_ints", MinMetric, one(INTS), lambda b: flat(b).min()),
    case("max", F64(MaxMetric), one(VALUES), lambda b: flat(b).max()),
    case("max_nan_ignore", F64(MaxMetric, nan_strategy="ignore"), one(WITH_NAN), lambda b: np.nanmax(flat(b))),
    case("cat", CatMetric, one(VALUES[2::2]), lambda b: flat(b).astype(np.float32)),
    case("cat_float64", F64(CatMetric), one(VALUES[2::2]), flat),
    case("cat_rows", F64(CatMetric), one(ROWS), lambda b: np.concatenate([np.asarray(r[0]) for r in b])),
    case("cat_nan_ignore", F64(CatMetric, nan_strategy="ignore"), one(WITH_NAN[2::2]),
         lambda b: flat(b)[~np.isnan(flat(b))]),
    case("running_mean_3", F64(RunningMean, window=3), one(VALUES), lambda b: ref_mean(b[-3:]),
         sharded_reference=running_ref(3)),
    case("running_mean_weighted_2", F64(RunningMean, window=2), list(zip(VALUES, WEIGHTS)),
         lambda b: ref_mean(b[-2:]), sharded_reference=running_ref(2)),
    case("running_mean_wide", F64(RunningMean, window=50), one(VALUES), ref_mean),
    case("average_loss", F64(AverageLoss), LOSSES, ref_loss),
    case("average_loss_per_sample", F64(AverageLoss), one(SAMPLE_LOSSES), ref_mean),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_lifecycle_and_reference(case):
    check_metric(case)


# -- semantics ------------------------------------------------------------------------------------


def test_results_are_in_the_metrics_dtype_and_accumulate_in_float64():
    """float32 results by default (torchmetrics'), but 1e8 + 1e8 ones summed exactly: the
    accumulator is float64, the result rounded once."""
    m = SumMetric()
    for _ in range(4):
        m.update(torch.full((1000,), 1.0, dtype=torch.float64))
    m.update(torch.tensor(1e8, dtype=torch.float64))
    assert m.compute().dtype == torch.float32
    assert float(m.compute()) == float(torch.tensor(1e8 + 4000, dtype=torch.float32))
    assert F64(MeanMetric)().update(torch.tensor([1.0, 2.0])).compute().dtype == torch.float64


def test_running_mean_window_of_updates():
    m = F64(RunningMean, window=2)()
    m.update(torch.tensor([100.0, 100.0]))
    m.update(torch.tensor([1.0, 2.0, 3.0]))  # each update counts its values, weighted
    assert float(m.compute()) == pytest.approx((100 + 100 + 1 + 2 + 3) / 5)
    m.update(5.0)
    assert float(m.compute()) == pytest.approx((1 + 2 + 3 + 5) / 4)  # the first update left the window
    m.update(torch.empty(0))
    assert float(m.compute()) == 5.0  # an empty update still takes a slot
    m.update(torch.empty(0))
    assert np.isnan(float(m.compute()))  # the window holds no values: 0 / 0, as torchmetrics


def test_cat_metric_keeps_the_shape_after_dim_0():
    m = CatMetric().update(torch.ones(2, 3)).update(torch.zeros(1, 3))
    assert m.compute().shape == (3, 3)
    before = m.compute()
    assert_rejects(m, (torch.ones(4),), ValueError, r"value: expected values of shape \[N, 3\] as before, got \[4\]")
    assert torch.equal(m.compute(), before)
    assert CatMetric().update(7.0).compute().shape == ()  # one value comes back 0-d, as torchmetrics
    assert torch.equal(CatMetric().update(1.0).update(torch.tensor([2.0, 3.0])).compute(), torch.tensor([1.0, 2.0, 3.0]))


def test_cat_metric_merge_refuses_different_shapes():
    a, b = CatMetric().update(torch.ones(2, 3)), CatMetric().update(torch.ones(2, 2))
    with pytest.raises(ValueError, match="different shapes after dim 0"):
        a.merge_state([b])
    assert torch.equal(a.merge_state([CatMetric(), CatMetric().update(torch.zeros(1, 3))]).compute(),
                       torch.tensor([[1.0, 1.0, 1.0]] * 2 + [[0.0, 0.0, 0.0]]))


def test_cat_metric_forward_with_another_shape_keeps_the_state():
    m = CatMetric()
    m(torch.ones(2, 3))
    with pytest.raises(ValueError, match="different shapes after dim 0"):
        m(torch.ones(2, 2))
    assert torch.equal(m.compute(), torch.ones(2, 3)) and m.update_count == 1


def test_average_loss_weighs_by_batch_size():
    m = AverageLoss().update(torch.tensor(1.0), 30).update(4.0, torch.tensor(10))
    assert float(m.compute()) == pytest.approx(1.75)  # a mean of the two batch means would be 2.5
    assert float(AverageLoss().update(2.0, 0).update(3.0, 4).compute()) == 3.0
    assert m.compute().dtype == torch.float32  # the metric's dtype


@pytest.mark.parametrize(
    "cls, extra",
    [(SumMetric, ()), (MeanMetric, ()), (MaxMetric, ()), (CatMetric, ()), (RunningMean, ()), (AverageLoss, (4,))],
)
def test_a_loss_that_requires_grad_leaves_no_graph_in_the_state(cls, extra):
    loss = (torch.randn(3, requires_grad=True) ** 2).mean()
    metric = cls().update(loss, *extra)
    tensors = [getattr(metric, name) for name in metric.state_names]
    assert tensors and not any(t.requires_grad for t in tensors)
    assert not metric.compute().requires_grad


def test_functional_forms():
    values, weights = VALUES[0], WEIGHTS[0]
    expected = ((values * weights).sum() / weights.sum()).float()
    torch.testing.assert_close(weighted_mean(values, weights), expected, rtol=1e-7, atol=0)
    torch.testing.assert_close(weighted_sum(values, 2.0), (2 * values.sum()).float(), rtol=1e-7, atol=0)
    assert float(weighted_sum(torch.empty(0))) == 0.0
    assert np.isnan(float(weighted_mean(torch.empty(0))))  # 0 / 0, as MeanMetric
    with pytest.warns(UserWarning, match="1 NaN value"):  # "warn" is the default, as the classes'
        assert float(weighted_mean(torch.tensor([1.0, NAN, 3.0]))) == 2.0


# -- NaN policy (torchmetrics' semantics; the values are checked against torchmetrics in
#    test_regagg_torchmetrics_parity.py) -------------------------------------------------------------

NAN_BATCH = torch.tensor([1.0, NAN, 3.0])


@pytest.mark.parametrize("factory", [SumMetric, MeanMetric, MinMetric, MaxMetric, CatMetric, RunningMean])
def test_nan_error_raises_a_value_error_that_is_a_runtime_error_and_keeps_state(factory):
    metric = factory(nan_strategy="error").update(torch.tensor([5.0, 6.0]))
    before = metric.compute()
    assert_rejects(metric, (NAN_BATCH,), ValueError, r"value: NaN at flat index 1 \(nan_strategy='error'")
    with pytest.raises(RuntimeError):  # torchmetrics raises RuntimeError there
        metric.update(NAN_BATCH)
    torch.testing.assert_close(metric.compute(), before)
    assert issubclass(NaNValueError, ValueError) and issubclass(NaNValueError, RuntimeError)


@pytest.mark.parametrize(
    "factory, ignored",
    [(SumMetric, 4.0), (MeanMetric, 2.0), (MinMetric, 1.0), (MaxMetric, 3.0), (P(RunningMean, window=1), 2.0)],
)
def test_nan_warn_is_the_default_and_ignore_disable_replace(factory, ignored):
    with pytest.warns(UserWarning, match="1 NaN value"):
        assert float(factory().update(NAN_BATCH).compute()) == ignored
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert float(factory(nan_strategy="ignore").update(NAN_BATCH).compute()) == ignored
    assert np.isnan(float(factory(nan_strategy="disable").update(NAN_BATCH).compute()))
    replaced = float(factory(nan_strategy=-4.0).update(NAN_BATCH).compute())
    assert replaced == {4.0: 0.0, 2.0: 0.0, 1.0: -4.0, 3.0: 3.0}[ignored]


def test_nan_weight_follows_the_policy():
    assert_rejects(MeanMetric(nan_strategy="error"), (torch.tensor([1.0, 2.0]), torch.tensor([1.0, NAN])), ValueError,
                   r"weight: NaN at flat index 1")
    m = MeanMetric(nan_strategy="ignore").update(torch.tensor([1.0, 2.0, 4.0]), torch.tensor([1.0, NAN, 1.0]))
    assert float(m.compute()) == 2.5
    # a float strategy: the value where the value or its weight is NaN becomes it, its weight 1
    m = MeanMetric(nan_strategy=2.0).update(torch.tensor([1.0, 5.0]), torch.tensor([3.0, NAN]))
    assert float(m.compute()) == (1.0 * 3 + 2.0 * 1) / 4


def test_disable_keeps_the_weights():
    """A deliberate difference: torchmetrics' MeanMetric drops the weights under "disable"."""
    m = MeanMetric(nan_strategy="disable").update(torch.tensor([1.0, 3.0]), torch.tensor([3.0, 1.0]))
    assert float(m.compute()) == 1.5


def test_nan_loss():
    assert_rejects(AverageLoss(), (torch.tensor(NAN), 8), ValueError, r"loss: NaN")
    m = AverageLoss(nan_strategy="ignore").update(torch.tensor(NAN), 8).update(2.0, 4)
    assert float(m.compute()) == 2.0 and int(m.num_samples) == 4  # the NaN batch is dropped whole


# -- values over no values ---------------------------------------------------------------------------


@pytest.mark.parametrize("factory", [SumMetric, MeanMetric, MinMetric, MaxMetric, CatMetric, RunningMean, AverageLoss])
def test_ignite_style_compute_before_any_update_raises(factory):
    metric = factory()
    with metric.raising_if_never_updated(), pytest.raises(NotComputableError):
        metric.compute()


def test_updates_without_values_give_torchmetrics_empty_values():
    empty = torch.empty(0)
    assert float(SumMetric().update(empty).compute()) == 0.0
    assert CatMetric().update(empty).compute().shape == (0,)
    assert float(MinMetric().update(empty).compute()) == float("inf")
    assert float(MaxMetric().update(empty).compute()) == float("-inf")
    for factory in (MeanMetric, RunningMean):
        assert np.isnan(float(factory().update(empty).compute()))
    assert np.isnan(float(MeanMetric().update(torch.tensor([1.0, 2.0]), 0.0).compute()))
    with pytest.raises(NotComputableError, match="at least one sample"):  # ignite's Loss rule
        AverageLoss().update(empty).compute()


# -- bad input ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "factory, args, exc, match",
    [
        (SumMetric, ("3.0",), TypeError, r"value: expected a tensor or a Python number, got str"),
        (MaxMetric, (torch.ones(2, dtype=torch.complex64),), TypeError, r"value: expected a real tensor"),
        (CatMetric, (torch.ones(2, device="meta"),), ValueError, r"value: expected a tensor on cpu"),
        (MeanMetric, (torch.ones(3), torch.ones(2)), ValueError, r"weight: expected a number or a tensor broadcastable"),
        (MeanMetric, (torch.ones(3), torch.tensor([1.0, -1.0, 1.0])), ValueError, r"weight: expected finite weights >= 0"),
        (MeanMetric, (torch.ones(2), float("inf")), ValueError, r"weight: expected finite weights >= 0, got inf"),
        (RunningMean, (torch.ones(3), torch.ones(2)), ValueError, r"weight: expected a number or a tensor broadcastable"),
        (AverageLoss, (torch.tensor(1.0),), ValueError, r"batch_size: required with a scalar loss"),
        (AverageLoss, (1.0, -3), ValueError, r"batch_size: expected an int >= 0, got -3"),
        (AverageLoss, (1.0, 2.5), ValueError, r"batch_size: expected an int >= 0, got 2.5"),
        (AverageLoss, (torch.ones(4), 5), ValueError, r"batch_size: expected None or 4"),
        (AverageLoss, (torch.ones(2, 2),), ValueError, r"loss: expected a number, a 0-d tensor or per-sample"),
    ],
)
def test_bad_input_is_rejected_and_state_kept(factory, args, exc, match):
    metric = factory()
    metric.update(torch.tensor(2.0), 3) if factory is AverageLoss else metric.update(torch.tensor([2.0, 3.0]))
    before = metric.compute()
    assert_rejects(metric, args, exc, match)
    torch.testing.assert_close(metric.compute(), before)


def test_python_values_as_torchmetrics_accepts_them():
    assert float(SumMetric().update(True).update(2).update([1.5, 2.5]).compute()) == 7.0
    assert float(MeanMetric().update(np.array([1.0, 3.0]), 1).compute()) == 2.0


@pytest.mark.parametrize(
    "factory, match",
    [
        (P(SumMetric, nan_strategy="drop"), "nan_strategy: expected one of"),
        (P(MinMetric, nan_strategy=True), "nan_strategy"),
        (P(MaxMetric, nan_strategy=2), "nan_strategy"),  # an int is refused, as torchmetrics
        (P(RunningMean, window=0), "window: expected a positive int"),
    ],
)
def test_bad_options(factory, match):
    with pytest.raises(ValueError, match=match):
        factory()


def test_doctests():
    import doctest

    import torchtally.functional.aggregation.forms
    import torchtally.metrics.aggregation

    for module in (torchtally.metrics.aggregation, torchtally.functional.aggregation.forms):
        failed, attempted = doctest.testmod(module)
        assert attempted > 0 and failed == 0
