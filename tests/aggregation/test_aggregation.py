"""Aggregation metrics against numpy, the NaN policy, the running window, edge cases and bad
input. CASES (support/aggregation_cases.py) also run through the shared tester
(support.metric_tester); their 3-rank distributed check is in
tests/distributed/test_regression_aggregation.py. Parity with torchmetrics over the argument
grid is in test_regression_aggregation_parity.py."""

import functools
import warnings

import numpy as np
import pytest
import torch
import torchmetrics.aggregation
from support.aggregation_cases import CASES, F64, VALUES, WEIGHTS
from support.doctests import package_doctests
from support.metric_tester import assert_rejects, check_metric

from torchtally import NotComputableError
from torchtally.aggregation import (
    AverageLoss,
    CatMetric,
    MaxMetric,
    MeanMetric,
    MinMetric,
    RunningMean,
    RunningSum,
    SumMetric,
)
from torchtally.functional import weighted_mean, weighted_sum
from torchtally.functional.aggregation import NaNValueError

P = functools.partial
NAN = float("nan")


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


def test_running_sum_window_of_updates():
    m = F64(RunningSum, window=2)()
    with pytest.warns(UserWarning, match="before the ``update``"):
        assert float(m.compute()) == 0.0  # over no values: 0, as torchmetrics
    m.update(torch.tensor([100.0, 100.0]))
    m.update(torch.tensor([1.0, 2.0, 3.0]))
    assert float(m.compute()) == 206.0
    m.update(5.0)
    assert float(m.compute()) == 11.0  # the first update left the window
    m.update(torch.empty(0))
    assert float(m.compute()) == 5.0  # an empty update still takes a slot
    assert m.update_count == 4 and m.window_sums.dtype == torch.float64


def test_running_sum_shares_running_means_window():
    """One window machinery: RunningSum's slots are RunningMean's weighted sums."""
    mean, total = RunningMean(window=3), RunningSum(window=3)
    for v in (torch.tensor([1.0, 2.0]), 4.0, torch.tensor([[3.0, 5.0]]), -1.0):
        mean.update(v)
        total.update(v)
    assert torch.equal(mean.window_sums, total.window_sums) and torch.equal(mean.num_updates, total.num_updates)
    assert set(total.state_names) == {"window_sums", "num_updates"}


@pytest.mark.parametrize("nan_strategy", ["warn", "ignore", "disable", 2.0])
@pytest.mark.parametrize("window", [1, 3])
def test_running_sum_as_torchmetrics(window, nan_strategy):
    """forward returns the batch's sum and moves the window; compute sums the window (as
    torchmetrics.aggregation.RunningSum, whose update_count stays 0)."""
    g = torch.Generator().manual_seed(window)
    batches = [torch.randn(n, generator=g) for n in (3, 1, 4, 2, 6)]
    batches[1][0] = NAN
    ours, theirs = RunningSum(window, nan_strategy), torchmetrics.aggregation.RunningSum(window, nan_strategy)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for batch in batches:
            got, want = ours(batch), theirs(batch.clone())
            assert got.dtype == want.dtype and got.shape == want.shape
            torch.testing.assert_close(got, want, rtol=1e-6, atol=1e-6, equal_nan=True)
            torch.testing.assert_close(ours.compute(), theirs.compute(), rtol=1e-6, atol=1e-6, equal_nan=True)
    assert ours.update_count == len(batches)
    updated = RunningSum(window, nan_strategy)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for batch in batches:
            updated.update(batch)
        torch.testing.assert_close(updated.compute(), theirs.compute(), rtol=1e-6, atol=1e-6, equal_nan=True)


def test_running_sum_signature_and_attributes():
    import inspect

    ours, theirs = RunningSum, torchmetrics.aggregation.RunningSum
    params = [(p.name, p.kind, p.default) for p in inspect.signature(ours.__init__).parameters.values()]
    assert params == [(p.name, p.kind, p.default) for p in inspect.signature(theirs.__init__).parameters.values()]
    assert ours.higher_is_better == theirs.higher_is_better


def test_cat_metric_keeps_the_shape_after_dim_0():
    m = CatMetric().update(torch.ones(2, 3)).update(torch.zeros(1, 3))
    assert m.compute().shape == (3, 3)
    before = m.compute()
    assert_rejects(m, (torch.ones(4),), ValueError, r"value: expected values of shape \[N, 3\] as before, got \[4\]")
    assert torch.equal(m.compute(), before)
    assert CatMetric().update(7.0).compute().shape == ()  # one value comes back 0-d, as torchmetrics
    assert torch.equal(
        CatMetric().update(1.0).update(torch.tensor([2.0, 3.0])).compute(), torch.tensor([1.0, 2.0, 3.0])
    )


@pytest.mark.parametrize("strategy", ["warn", "ignore", "error", "disable", -4.0])
def test_cat_metric_stores_a_copy_of_a_value_in_its_storage_dtype(strategy):
    """A float32 value (the storage dtype) is stored without a float64 round trip: as a copy
    (refilling the caller's buffer leaves it alone), infinities kept, and a NaN still handled
    by the policy (the same values as a float64 value of the same numbers)."""
    buffer = torch.tensor([[1.0, float("inf")], [-2.0, 2.5]])
    m = CatMetric(nan_strategy=strategy).update(buffer)
    buffer.fill_(7.0)
    assert torch.equal(m.compute(), torch.tensor([[1.0, float("inf")], [-2.0, 2.5]]))
    if strategy == "error":
        assert_rejects(m, (torch.tensor([[1.0, NAN]]),), ValueError, r"value: NaN at flat index 1")
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = CatMetric(nan_strategy=strategy).update(torch.tensor([1.0, NAN, 3.0])).compute()
        want = CatMetric(nan_strategy=strategy).update(torch.tensor([1.0, NAN, 3.0], dtype=torch.float64)).compute()
    assert got.dtype == want.dtype == torch.float32
    torch.testing.assert_close(got, want, equal_nan=True, rtol=0, atol=0)


def test_cat_metric_results_are_the_callers_own():
    """CatMetric's compute hands out its concatenation itself (no cached copy): editing a result
    changes neither the state nor the next result, also after a forward and a later update."""
    m = CatMetric()
    batch_value = m(torch.tensor([1.0, 2.0]))
    batch_value.fill_(-1.0)
    first = m.compute()
    first.fill_(9.0)
    assert torch.equal(m.compute(), torch.tensor([1.0, 2.0]))
    m.update(torch.tensor([3.0]))
    assert torch.equal(m.compute(), torch.tensor([1.0, 2.0, 3.0])) and torch.equal(m.values, m.compute())


def test_one_element_results_that_do_not_fit_the_result_dtype_raise():
    m = SumMetric().update(torch.tensor(1e300, dtype=torch.float64))
    with pytest.raises(ValueError, match="SumMetric: the result 1e\\+300 does not fit torch.float32"):
        m.compute()
    assert float(SumMetric().update(torch.tensor(float("inf"), dtype=torch.float64)).compute()) == float("inf")


def test_cat_metric_merge_refuses_different_shapes():
    a, b = CatMetric().update(torch.ones(2, 3)), CatMetric().update(torch.ones(2, 2))
    with pytest.raises(ValueError, match="different shapes after dim 0"):
        a.merge_state([b])
    assert torch.equal(
        a.merge_state([CatMetric(), CatMetric().update(torch.zeros(1, 3))]).compute(),
        torch.tensor([[1.0, 1.0, 1.0]] * 2 + [[0.0, 0.0, 0.0]]),
    )


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
#    test_regression_aggregation_parity.py) ----------------------------------------------------

NAN_BATCH = torch.tensor([1.0, NAN, 3.0])


@pytest.mark.parametrize("factory", [SumMetric, MeanMetric, MinMetric, MaxMetric, CatMetric, RunningMean, RunningSum])
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
    assert_rejects(
        MeanMetric(nan_strategy="error"),
        (torch.tensor([1.0, 2.0]), torch.tensor([1.0, NAN])),
        ValueError,
        r"weight: NaN at flat index 1",
    )
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
        (
            MeanMetric,
            (torch.ones(3), torch.ones(2)),
            ValueError,
            r"weight: expected a number or a tensor broadcastable",
        ),
        (
            MeanMetric,
            (torch.ones(3), torch.tensor([1.0, -1.0, 1.0])),
            ValueError,
            r"weight: expected finite weights >= 0",
        ),
        (MeanMetric, (torch.ones(2), float("inf")), ValueError, r"weight: expected finite weights >= 0, got inf"),
        (
            RunningMean,
            (torch.ones(3), torch.ones(2)),
            ValueError,
            r"weight: expected a number or a tensor broadcastable",
        ),
        (RunningSum, ("3.0",), TypeError, r"value: expected a tensor or a Python number, got str"),
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
        (P(RunningSum, window=True), "window: expected a positive int"),
        (P(RunningSum, nan_strategy="drop"), "nan_strategy: expected one of"),
    ],
)
def test_bad_options(factory, match):
    with pytest.raises(ValueError, match=match):
        factory()


def test_doctests():
    for package in ("torchtally.aggregation", "torchtally.functional.aggregation"):
        failed, attempted = package_doctests(package)
        assert attempted > 0 and failed == 0, package


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32, torch.float64])
@pytest.mark.parametrize("factory", [SumMetric, MeanMetric, MinMetric, MaxMetric, RunningMean, RunningSum])
def test_floating_cpu_batches_equal_the_float64_path(dtype, factory):
    """A floating CPU tensor takes one pass (its NaN-free sum or extreme); a list of the same
    values the checked float64 path: the same bits, NaN batches and inf - inf included."""
    g = torch.Generator().manual_seed(3)
    batches = [(torch.randn(5000, generator=g) * 100).to(dtype) for _ in range(3)]
    batches[1][[7, 4000]] = NAN  # dropped with a warning by both paths
    batches[2][[5, 9]] = torch.tensor([float("inf"), -float("inf")], dtype=dtype)
    fast, slow = factory(), factory()
    with pytest.warns(UserWarning, match="2 NaN value"):
        fast.update(batches[1])
    with pytest.warns(UserWarning, match="2 NaN value"):
        slow.update(batches[1].tolist())
    for batch in (batches[0], batches[2]):
        fast.update(batch)
        slow.update(batch.tolist())
    a, b = fast.compute(), slow.compute()
    assert torch.equal(a, b) or (bool(a.isnan()) and bool(b.isnan())), (a, b)
