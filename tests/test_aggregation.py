"""Aggregation metrics against numpy, torchmetrics parity, the NaN policy, the running window,
edge cases and bad input. CASES also run through the shared tester (metric_tester); their
3-rank distributed check is in test_regression_aggregation_distributed.py."""
import functools
import warnings

import numpy as np
import pytest
import torch
import torchmetrics

from metric_tester import MetricCase, assert_rejects, check_metric
from torchtally import (
    AverageLoss,
    CatMetric,
    MaxMetric,
    MeanMetric,
    MinMetric,
    NotComputableError,
    RunningMean,
    SumMetric,
)
from torchtally.functional import weighted_mean, weighted_sum

P = functools.partial
NAN = float("nan")
G = torch.Generator().manual_seed(0)
SHAPES = [(3, 2), (0,), (5,), (1, 4), (7,), (2, 2), (4,)]  # 7 batches, one empty, mixed ranks
VALUES = [torch.randn(s, generator=G, dtype=torch.float64) * 10 + 1e6 for s in SHAPES]
WEIGHTS = [torch.rand(s, generator=G, dtype=torch.float64) for s in SHAPES]
WITH_NAN = [v.clone() for v in VALUES]
WITH_NAN[0][1, 0] = WITH_NAN[4][2] = WITH_NAN[4][5] = NAN
INTS = [torch.randint(-50, 50, s, generator=G) for s in SHAPES]
LOSSES = [(torch.rand((), generator=G) * 3, n) for n in (32, 32, 32, 7)]  # short last batch
SAMPLE_LOSSES = [torch.rand(n, generator=G) for n in (5, 0, 8, 3)]


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


def ref_min(batches):
    return flat(batches).min()


def ref_max(batches):
    return flat(batches).max()


def ref_cat(batches):
    return flat(batches)


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


def case(name, factory, batches, reference, **kw):
    return MetricCase(name, factory, batches, reference, reference_on_batches=True, rtol=1e-12, atol=1e-9, **kw)


def one(values):
    return [(v,) for v in values]


CASES = [
    case("sum", SumMetric, one(VALUES), ref_sum),
    case("sum_python_numbers", SumMetric, one([1.5, -2, 3.25, 1e6]), ref_sum),
    case("sum_ints", SumMetric, one(INTS), ref_sum),
    case("sum_nan_ignore", P(SumMetric, nan_strategy="ignore"), one(WITH_NAN), ref_nansum),
    case("sum_nan_as_zero_point_five", P(SumMetric, nan_strategy=0.5), one(WITH_NAN),
         lambda b: np.nan_to_num(flat(b), nan=0.5).sum()),
    case("mean", MeanMetric, one(VALUES), ref_mean),
    case("mean_weighted", MeanMetric, list(zip(VALUES, WEIGHTS)), ref_mean),
    case("mean_scalar_weight", MeanMetric, [(v, float(i + 1)) for i, v in enumerate(VALUES)], ref_mean),
    case("mean_nan_ignore", P(MeanMetric, nan_strategy="ignore"), one(WITH_NAN), ref_nanmean),
    case("min", MinMetric, one(VALUES), ref_min),
    case("min_ints", MinMetric, one(INTS), ref_min),
    case("max", MaxMetric, one(VALUES), ref_max),
    case("max_nan_ignore", P(MaxMetric, nan_strategy="ignore"), one(WITH_NAN), lambda b: np.nanmax(flat(b))),
    case("cat", CatMetric, one(VALUES), lambda b: flat(b).astype(np.float32)),
    case("cat_float64", P(CatMetric, dtype=torch.float64), one(VALUES), ref_cat),
    case("cat_nan_ignore", P(CatMetric, nan_strategy="ignore", dtype=torch.float64), one(WITH_NAN),
         lambda b: flat(b)[~np.isnan(flat(b))]),
    case("running_mean_3", P(RunningMean, window=3), one(VALUES), lambda b: ref_mean(b[-3:]),
         sharded_reference=running_ref(3)),
    case("running_mean_weighted_2", P(RunningMean, window=2), list(zip(VALUES, WEIGHTS)), lambda b: ref_mean(b[-2:]),
         sharded_reference=running_ref(2)),
    case("running_mean_wide", P(RunningMean, window=50), one(VALUES), ref_mean),
    case("average_loss", AverageLoss, LOSSES, ref_loss),
    case("average_loss_per_sample", AverageLoss, one(SAMPLE_LOSSES), ref_mean),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_lifecycle_and_reference(case):
    check_metric(case)


@pytest.mark.parametrize(
    "ours, theirs, batches",
    [
        (SumMetric, torchmetrics.SumMetric, one(VALUES)),
        (MeanMetric, torchmetrics.MeanMetric, list(zip(VALUES, WEIGHTS))),
        (MinMetric, torchmetrics.MinMetric, one(VALUES)),
        (MaxMetric, torchmetrics.MaxMetric, one(VALUES)),
        (P(RunningMean, window=3), P(torchmetrics.RunningMean, window=3), one(VALUES)),
        (P(SumMetric, nan_strategy="ignore"), P(torchmetrics.SumMetric, nan_strategy="ignore"), one(WITH_NAN)),
        (P(MeanMetric, nan_strategy=2.0), P(torchmetrics.MeanMetric, nan_strategy=2.0), one(WITH_NAN)),
    ],
)
def test_torchmetrics_parity(ours, theirs, batches):
    a, b = ours(), theirs()
    for batch in batches:
        a.update(*batch)
        b.update(*(x.float() for x in batch))  # torchmetrics' default: float32 states
    torch.testing.assert_close(a.compute(), b.compute().double(), rtol=1e-6, atol=0)


def test_cat_matches_torchmetrics():
    a, b = CatMetric(), torchmetrics.CatMetric()
    for v in VALUES:
        a.update(v)
        if v.numel():
            b.update(v.reshape(-1).float())
    assert torch.equal(a.compute(), b.compute())


# -- semantics ------------------------------------------------------------------------------------


def test_running_mean_window_of_updates():
    m = RunningMean(window=2)
    m.update(torch.tensor([100.0, 100.0]))
    m.update(torch.tensor([1.0, 2.0, 3.0]))  # each update counts its values, weighted
    assert float(m.compute()) == pytest.approx((100 + 100 + 1 + 2 + 3) / 5)
    m.update(5.0)
    assert float(m.compute()) == pytest.approx((1 + 2 + 3 + 5) / 4)  # the first update left the window
    m.update(torch.empty(0))
    assert float(m.compute()) == 5.0  # an empty update still takes a slot
    m.update(torch.empty(0))
    with pytest.raises(NotComputableError, match="window holds no values"):
        m.compute()


def test_average_loss_weighs_by_batch_size():
    m = AverageLoss().update(torch.tensor(1.0), 30).update(4.0, torch.tensor(10))
    assert float(m.compute()) == pytest.approx(1.75)  # a mean of the two batch means would be 2.5
    assert float(AverageLoss().update(2.0, 0).update(3.0, 4).compute()) == 3.0


@pytest.mark.parametrize(
    "cls, extra",
    [(SumMetric, ()), (MeanMetric, ()), (MaxMetric, ()), (CatMetric, ()), (RunningMean, ()), (AverageLoss, (4,))],
)
def test_a_loss_that_requires_grad_leaves_no_graph_in_the_state(cls, extra):
    loss = (torch.randn(3, requires_grad=True) ** 2).mean()
    metric = cls().update(loss, *extra)
    tensors = [v for v in metric.__dict__.values() if isinstance(v, torch.Tensor)]
    tensors += [c for chunks in metric._cat_chunks.values() for c in chunks]
    assert tensors and not any(t.requires_grad for t in tensors)


def test_functional_forms():
    values, weights = VALUES[0], WEIGHTS[0]
    expected = (values * weights).sum() / weights.sum()
    torch.testing.assert_close(weighted_mean(values, weights), expected, rtol=1e-14, atol=0)
    torch.testing.assert_close(weighted_sum(values, 2.0), 2 * values.sum(), rtol=1e-14, atol=0)
    assert float(weighted_sum(torch.empty(0))) == 0.0
    with pytest.raises(NotComputableError):
        weighted_mean(torch.empty(0))
    assert float(weighted_mean(torch.tensor([1.0, NAN, 3.0]), nan_strategy="ignore")) == 2.0


# -- NaN policy -----------------------------------------------------------------------------------

NAN_BATCH = torch.tensor([1.0, NAN, 3.0])


@pytest.mark.parametrize("factory", [SumMetric, MeanMetric, MinMetric, MaxMetric, CatMetric, RunningMean])
def test_nan_error_is_the_default_and_keeps_state(factory):
    metric = factory().update(torch.tensor([5.0, 6.0]))
    before = metric.compute()
    assert_rejects(metric, (NAN_BATCH,), ValueError, r"value: NaN at flat index 1 \(nan_strategy='error'")
    torch.testing.assert_close(metric.compute(), before)


@pytest.mark.parametrize(
    "factory, ignored",
    [(SumMetric, 4.0), (MeanMetric, 2.0), (MinMetric, 1.0), (MaxMetric, 3.0), (P(RunningMean, window=1), 2.0)],
)
def test_nan_warn_ignore_disable_and_replace(factory, ignored):
    with pytest.warns(UserWarning, match="1 NaN value"):
        assert float(factory(nan_strategy="warn").update(NAN_BATCH).compute()) == ignored
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert float(factory(nan_strategy="ignore").update(NAN_BATCH).compute()) == ignored
    assert np.isnan(float(factory(nan_strategy="disable").update(NAN_BATCH).compute()))
    replaced = float(factory(nan_strategy=-4.0).update(NAN_BATCH).compute())
    assert replaced == {4.0: 0.0, 2.0: 0.0, 1.0: -4.0, 3.0: 3.0}[ignored]


def test_nan_weight_follows_the_policy():
    assert_rejects(MeanMetric(), (torch.tensor([1.0, 2.0]), torch.tensor([1.0, NAN])), ValueError,
                   r"weight: NaN at flat index 1")
    m = MeanMetric(nan_strategy="ignore").update(torch.tensor([1.0, 2.0, 4.0]), torch.tensor([1.0, NAN, 1.0]))
    assert float(m.compute()) == 2.5


def test_nan_loss():
    assert_rejects(AverageLoss(), (torch.tensor(NAN), 8), ValueError, r"loss: NaN")
    m = AverageLoss(nan_strategy="ignore").update(torch.tensor(NAN), 8).update(2.0, 4)
    assert float(m.compute()) == 2.0 and int(m.num_samples) == 4  # the NaN batch is dropped whole


# -- empty epochs and empty updates ----------------------------------------------------------------

FACTORIES = [SumMetric, MeanMetric, MinMetric, MaxMetric, CatMetric, RunningMean, AverageLoss]


@pytest.mark.parametrize("factory", FACTORIES)
def test_empty_epoch_raises(factory):
    metric = factory()
    with metric.raising_if_never_updated(), pytest.raises(NotComputableError):
        metric.compute()


def test_updates_without_values():
    empty = torch.empty(0)
    assert float(SumMetric().update(empty).compute()) == 0.0
    assert CatMetric().update(empty).compute().shape == (0,)
    for factory in (MeanMetric, MinMetric, MaxMetric, RunningMean):
        with pytest.raises(NotComputableError, match="no values"):
            factory().update(empty).compute()
    with pytest.raises(NotComputableError, match="no samples"):
        AverageLoss().update(empty).compute()
    with pytest.raises(NotComputableError):
        MeanMetric().update(torch.tensor([1.0, 2.0]), 0.0).compute()


# -- bad input ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "factory, args, exc, match",
    [
        (SumMetric, ("3.0",), TypeError, r"value: expected a tensor or a Python number, got str"),
        (SumMetric, (True,), TypeError, r"value: expected a tensor or a Python number, got bool"),
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


@pytest.mark.parametrize(
    "factory, match",
    [
        (P(SumMetric, nan_strategy="drop"), "nan_strategy: expected one of"),
        (P(MeanMetric, nan_strategy=NAN), "nan_strategy"),
        (P(MinMetric, nan_strategy=True), "nan_strategy"),
        (P(RunningMean, window=0), "window: expected an int >= 1"),
    ],
)
def test_bad_options(factory, match):
    with pytest.raises(ValueError, match=match):
        factory()
    with pytest.raises(TypeError, match="dtype: expected a torch.dtype"):
        CatMetric(dtype="float32")


def test_doctests():
    import doctest

    import torchtally.functional.aggregation
    import torchtally.metrics.aggregation

    for module in (torchtally.metrics.aggregation, torchtally.functional.aggregation):
        failed, attempted = doctest.testmod(module)
        assert attempted > 0 and failed == 0
