"""Large values raise or stay exact, never wrap and never turn silently into inf:

* every regression and aggregation class of the catalogue, given its batch scaled by 1e150 in
  float64 (squares near 1e300, float64's edge), returns the unscaled result times 1e150 to the
  power of its law (MSE 2, MAE 1, correlations 0, ...) to 1e-9, or raises ValueError;
* a finite float64 result that does not fit the metric's float32 result dtype raises at
  compute (aggregation totals, regression and image results: it used to come back as inf), and
  a value that does not fit CatMetric's float32 storage raises at update;
* confusion-matrix counts past 2^31 samples are exact (an expanded view of 2^31 + 7 samples:
  no int32 index or count anywhere in the kernel).
Integer images near 2^62 in TotalVariation: tests/image/test_image_never_silent.py.
"""

import warnings

import pytest
import torch
from support.metric_catalogue import METRICS, entry_id

import torchtally as M
from torchtally.classification import MulticlassConfusionMatrix
from torchtally.image import TotalVariation

SCALE = 1e150
# How each result scales with its inputs: result(s x) = s^k result(x).
SCALING_POWER = {
    "MeanSquaredError": 2,
    "TweedieDevianceScore": 2,  # power 0 (the default): the squared error
    "MeanAbsoluteError": 1,
    "MinkowskiDistance": 1,
    "ContinuousRankedProbabilityScore": 1,
    "AverageLoss": 1,
    "SumMetric": 1,
    "MeanMetric": 1,
    "MaxMetric": 1,
    "MinMetric": 1,
    "RunningMean": 1,
    "RunningSum": 1,
    "CatMetric": 1,
    "R2Score": 0,
    "ExplainedVariance": 0,
    "PearsonCorrCoef": 0,
    "ConcordanceCorrCoef": 0,
    "CosineSimilarity": 0,
    "CosineSimilarity[none]": 0,
    "MeanAbsolutePercentageError": 0,
    "SymmetricMeanAbsolutePercentageError": 0,
    "WeightedMeanAbsolutePercentageError": 0,
    "RelativeSquaredError": 0,
    "NormalizedRootMeanSquaredError": 0,
    "NormalizedRootMeanSquaredError[std]": 0,
    "NormalizedRootMeanSquaredError[range]": 0,
    "KLDivergence": 0,  # rows are normalised to distributions
    "KLDivergence[none]": 0,
    "JensenShannonDivergence": 0,
}
# No power law: log-cosh and MSLE are not homogeneous; CSI thresholds the values at 0 (its
# result does not change with scale but depends on the threshold's units); the rank correlations
# keep float32 pairs and refuse values past float32 (tests/regression cover that refusal).
NO_LAW = {
    "LogCoshError",
    "MeanSquaredLogError",
    "CriticalSuccessIndex",
    "CriticalSuccessIndex[sequence]",
    "SpearmanCorrCoef",
    "KendallRankCorrCoef",
}
FLOAT_FAMILIES = ("regression", "nonnegative", "rows", "ensemble", "aggregation", "distributions", "loss")
SWEPT = [e for e in METRICS if e.family in FLOAT_FAMILIES]


def test_every_float_entry_has_a_law_or_a_reason():
    names = {e.name for e in SWEPT}
    assert names == set(SCALING_POWER) | NO_LAW, names ^ (set(SCALING_POWER) | NO_LAW)


def _result(entry, args):
    metric = entry.metric()
    metric.set_dtype(torch.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        metric.update(*args)
        return torch.as_tensor(metric.compute()).double()


@pytest.mark.parametrize("entry", [e for e in SWEPT if e.name in SCALING_POWER], ids=entry_id)
def test_values_near_float64s_edge_scale_exactly(entry):
    args = tuple(a.double() for a in entry.batch(6, generator=torch.Generator().manual_seed(4)))
    base = _result(entry, args)
    try:
        scaled = _result(entry, tuple(a * SCALE for a in args))
    except ValueError:
        return  # refusing is allowed; a wrong number is not
    want = base * SCALE ** SCALING_POWER[entry.name]
    torch.testing.assert_close(scaled, want, rtol=1e-9, atol=0, equal_nan=True)


@pytest.mark.parametrize(
    "make", [M.SumMetric, M.MeanMetric, M.MaxMetric, M.MinMetric, M.RunningMean, M.RunningSum], ids=lambda c: c.__name__
)
def test_a_total_past_the_result_dtype_raises_at_compute(make):
    metric = make()  # results in float32, totals in float64
    metric.update(torch.tensor([1e300, 2e300], dtype=torch.float64))
    with pytest.raises(ValueError, match="does not fit torch.float32; call set_dtype"):
        metric.compute()
    metric.set_dtype(torch.float64)
    assert torch.isfinite(metric.compute())


@pytest.mark.parametrize(
    "make, args",
    [
        (M.MeanSquaredError, (torch.tensor([1e20, 0.0], dtype=torch.float64), torch.zeros(2, dtype=torch.float64))),
        (TotalVariation, (torch.tensor([1e38, -1e38, 1e38], dtype=torch.float64).reshape(1, 1, 3, 1),)),
    ],
    ids=["MeanSquaredError", "TotalVariation"],
)
def test_a_float64_result_past_float32_raises_instead_of_inf(make, args):
    """Results are computed in float64 and returned in the metric's dtype (float32 by default):
    1e40 used to come back as inf, silently."""
    metric = make()
    metric.update(*args)
    with pytest.raises(ValueError, match="does not fit torch.float32"):
        metric.compute()
    metric.set_dtype(torch.float64)
    assert torch.isfinite(metric.compute())


def test_a_value_past_cat_metrics_storage_raises_at_update():
    metric = M.CatMetric()  # stores float32
    metric.update(torch.tensor([1.0]))
    with pytest.raises(ValueError, match="^value: the value 1e\\+150 at flat index 1 does not fit the torch.float32"):
        metric.update(torch.tensor([2.0, 1e150], dtype=torch.float64))
    assert metric.compute().tolist() == 1.0  # the refused batch left nothing
    metric.update(torch.tensor([float("inf")]))  # an infinite value is a value, not an overflow
    assert metric.compute().tolist() == [1.0, float("inf")]


def test_confusion_matrix_counts_past_two_to_the_31_are_exact():
    n = 2**31 + 7
    preds = torch.ones(1, dtype=torch.int64).expand(n)  # no memory: one element, stride 0
    metric = MulticlassConfusionMatrix(3)
    metric.update(preds, preds)
    metric.update(torch.tensor([1]), torch.tensor([2]))
    want = torch.zeros(3, 3, dtype=torch.int64)
    want[1, 1], want[2, 1] = n, 1
    assert torch.equal(metric.confmat, want)
