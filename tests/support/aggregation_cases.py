"""The aggregation cases of the shared tester: every configuration of the aggregation metrics
(sum, mean, min, max, cat, running mean and sum, average loss) with its batches (uneven, one empty, mixed
ranks, NaN, ints, Python numbers) and its numpy reference, and the makers and references they
are built from. tests/aggregation/test_aggregation.py runs each through ``check_metric`` in one
process; tests/distributed/test_regression_aggregation.py runs them all on 3 gloo ranks. The
factories are pickled to those ranks by module name (``support.metric_tester.made_in_float64``)."""

import functools

import numpy as np
import torch

from support.metric_tester import MetricCase, made_in_float64
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


F64 = functools.partial(P, made_in_float64)  # F64(SumMetric, nan_strategy="ignore")


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
    weights = np.concatenate(
        [np.broadcast_to(np.asarray(b[1], dtype=np.float64), np.shape(b[0])).reshape(-1) for b in batches]
    )
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


def running_sum_ref(window):
    """The sum of the union of every part's last ``window`` batches."""

    def ref(shards):
        return ref_sum([batch for shard in shards for batch in shard[-window:]])

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
    case(
        "sum_nan_as_zero_point_five",
        F64(SumMetric, nan_strategy=0.5),
        one(WITH_NAN),
        lambda b: np.nan_to_num(flat(b), nan=0.5).sum(),
    ),
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
    case(
        "cat_nan_ignore",
        F64(CatMetric, nan_strategy="ignore"),
        one(WITH_NAN[2::2]),
        lambda b: flat(b)[~np.isnan(flat(b))],
    ),
    case(
        "running_mean_3",
        F64(RunningMean, window=3),
        one(VALUES),
        lambda b: ref_mean(b[-3:]),
        sharded_reference=running_ref(3),
    ),
    case(
        "running_mean_weighted_2",
        F64(RunningMean, window=2),
        list(zip(VALUES, WEIGHTS)),
        lambda b: ref_mean(b[-2:]),
        sharded_reference=running_ref(2),
    ),
    case("running_mean_wide", F64(RunningMean, window=50), one(VALUES), ref_mean),
    case(
        "running_sum_3",
        F64(RunningSum, window=3),
        one(VALUES),
        lambda b: ref_sum(b[-3:]),
        sharded_reference=running_sum_ref(3),
    ),
    case(
        "running_sum_nan_ignore_2",
        F64(RunningSum, window=2, nan_strategy="ignore"),
        one(WITH_NAN),
        lambda b: ref_nansum(b[-2:]),
        sharded_reference=lambda shards: ref_nansum([batch for shard in shards for batch in shard[-2:]]),
    ),
    case("running_sum_wide", P(RunningSum, window=50), one(VALUES), ref_sum, rtol=1e-7),
    case("average_loss", F64(AverageLoss), LOSSES, ref_loss),
    case("average_loss_per_sample", F64(AverageLoss), one(SAMPLE_LOSSES), ref_mean),
]
