"""Regression and aggregation metrics side by side with torchmetrics 1.9: constructor and
functional signatures, and values, dtypes and shapes over the argument grid torchmetrics
documents (num_outputs, multioutput, adjusted, squared, reduction, nan_strategy, weights, 1-D /
2-D / N-D inputs, float32 / float64 / half inputs), through the shared parity tester: forward per
batch, update + compute, update_count, and on 2 and 3 gloo ranks with uneven shards.

Values are compared with a float32 tolerance: torchmetrics accumulates in float32 where
torchtally accumulates in float64 (and rounds the result once)."""

import functools
import inspect
import warnings

import pytest
import torch
import torchmetrics
import torchmetrics.functional as tmf
from support.metric_tester import made_in_float64
from support.parity_tester import ParityCase, check_parity, run_parity_distributed

import torchtally
import torchtally.functional as ttf
from torchtally import aggregation as tta
from torchtally import regression as ttr

P = functools.partial
NAN = float("nan")
SIZES = (7, 13, 5, 9)  # uneven batches
TOL = dict(rtol=2e-5, atol=2e-6)


REGRESSION_CLASSES = [
    "MeanSquaredError",
    "MeanAbsoluteError",
    "MeanAbsolutePercentageError",
    "R2Score",
    "PearsonCorrCoef",
    "ExplainedVariance",
    "CosineSimilarity",
]
AGGREGATION_CLASSES = ["SumMetric", "MeanMetric", "MinMetric", "MaxMetric", "CatMetric", "RunningMean"]
FUNCTIONS = [
    "mean_squared_error",
    "mean_absolute_error",
    "mean_absolute_percentage_error",
    "r2_score",
    "pearson_corrcoef",
    "explained_variance",
    "cosine_similarity",
]


def _parameters(fn):
    """(name, kind, default) of every parameter: annotations may differ in spelling."""
    return [(p.name, p.kind, p.default) for p in inspect.signature(fn).parameters.values()]


@pytest.mark.parametrize("name", REGRESSION_CLASSES + AGGREGATION_CLASSES)
def test_class_signature_and_attributes(name):
    module_tm = torchmetrics.regression if name in REGRESSION_CLASSES else torchmetrics.aggregation
    module_tt = ttr if name in REGRESSION_CLASSES else tta
    ours, theirs = getattr(module_tt, name), getattr(module_tm, name)
    assert _parameters(ours.__init__) == _parameters(theirs.__init__)
    assert getattr(torchtally, name) is ours  # also at the top level
    assert ours.higher_is_better == theirs.higher_is_better
    assert ours.full_state_update == theirs.full_state_update
    # results carry no gradient (torchtally's rule, see Metric): False where torchmetrics says
    # True, None (unknown) where it says None
    assert ours.is_differentiable == (None if theirs.is_differentiable is None else False)


@pytest.mark.parametrize("name", FUNCTIONS)
def test_functional_signature(name):
    assert _parameters(getattr(ttf, name)) == _parameters(getattr(tmf, name))


# -- the grid ---------------------------------------------------------------------------------------


def data(shape, dtype, seed, positive=False):
    """preds and target of shape [N, ...] (N = sum(SIZES)), split into uneven batches."""
    g = torch.Generator().manual_seed(seed)
    full = (sum(SIZES),) + tuple(shape)
    target = torch.randn(full, generator=g, dtype=torch.float64) * 2 + 0.5
    preds = target + 0.7 * torch.randn(full, generator=g, dtype=torch.float64)
    if positive:
        target, preds = target.abs() + 0.1, preds.abs() + 0.1
    batches, lo = [], 0
    for n in SIZES:
        batches.append((preds[lo : lo + n].to(dtype), target[lo : lo + n].to(dtype)))
        lo += n
    return batches


def run(metric, batches):
    for batch in batches:
        metric.update(*batch)
    return metric.compute()


def assert_same_result(ours, theirs, rtol=2e-5, atol=2e-6):
    assert isinstance(ours, torch.Tensor), type(ours)
    assert ours.dtype == theirs.dtype, (ours.dtype, theirs.dtype)
    assert ours.shape == theirs.shape, (ours.shape, theirs.shape)
    torch.testing.assert_close(ours, theirs, rtol=rtol, atol=atol, equal_nan=True)


def both(name, module_tt, module_tm, *args, **kwargs):
    return getattr(module_tt, name)(*args, **kwargs), getattr(module_tm, name)(*args, **kwargs)


def pair(name, **kwargs):
    """(ours, theirs) factories of the class ``name`` with ``kwargs``."""
    tt, tm = (ttr, torchmetrics.regression) if name in REGRESSION_CLASSES else (tta, torchmetrics.aggregation)
    return P(getattr(tt, name), **kwargs), P(getattr(tm, name), **kwargs)


def label(kwargs):
    return ",".join(f"{k}={v}" for k, v in kwargs.items()) or "default"


SHAPES_1D_2D = ((), (1,), (3,))
REGRESSION_GRID = (
    [
        ("MeanSquaredError", dict(squared=sq, num_outputs=no), shape)
        for sq in (True, False)
        for no, shape in ((1, ()), (1, (3,)), (3, (3,)))
    ]
    + [("MeanAbsoluteError", dict(num_outputs=no), shape) for no, shape in ((1, ()), (1, (2, 3)), (3, (3,)))]
    + [("MeanAbsolutePercentageError", {}, shape) for shape in ((), (2, 2))]
    + [
        ("R2Score", dict(adjusted=adj, multioutput=mo), shape)
        for adj in (0, 2)
        for mo in ("raw_values", "uniform_average", "variance_weighted")
        for shape in SHAPES_1D_2D
    ]
    + [
        ("ExplainedVariance", dict(multioutput=mo), shape)
        for mo in ("raw_values", "uniform_average", "variance_weighted")
        for shape in ((), (3,), (2, 3))
    ]
    + [("PearsonCorrCoef", dict(num_outputs=no), shape) for no, shape in ((1, ()), (1, (1,)), (3, (3,)))]
    + [("CosineSimilarity", dict(reduction=red), (4,)) for red in ("sum", "mean", "none", None)]
)
REGRESSION_CASES = [
    ParityCase(
        f"{name}[{label(kwargs)}]{list(shape)}-{str(dtype)[6:]}",
        *pair(name, **kwargs),
        batches=data(shape, dtype, seed=i, positive=name == "MeanAbsolutePercentageError"),
        **TOL,
    )
    for i, (name, kwargs, shape) in enumerate(REGRESSION_GRID)
    for dtype in (torch.float32, torch.float64)
]
# made while the default dtype is float64: results follow it where torchmetrics' do
DEFAULT_FLOAT64_CASES = [
    ParityCase(
        f"{name}-default-float64{list(shape)}",
        P(made_in_float64, getattr(ttr, name)),
        P(made_in_float64, getattr(torchmetrics.regression, name)),
        batches=data(shape, torch.float32, seed=5),
        **TOL,
    )
    for name, shape in [
        ("MeanSquaredError", ()),
        ("MeanAbsoluteError", ()),
        ("R2Score", ()),
        ("R2Score", (3,)),
        ("ExplainedVariance", (3,)),
        ("PearsonCorrCoef", ()),
        ("CosineSimilarity", (3,)),
    ]
]
HALF_GRID = [
    (name, shape)
    for name in ("MeanSquaredError", "MeanAbsoluteError", "R2Score", "ExplainedVariance")
    for shape in ((), (1,))
] + [
    ("R2Score", (3,)),
    ("ExplainedVariance", (3,)),
    ("PearsonCorrCoef", ()),
    ("PearsonCorrCoef", (1,)),
    ("CosineSimilarity", (4,)),
]
# half inputs: the result dtype follows torchmetrics' (half for R2 / explained variance on
# [N, D]); the values are torchtally's float64 ones rounded, so only a loose comparison
HALF_CASES = [
    ParityCase(
        f"{name}{list(shape)}-{str(dtype)[6:]}", *pair(name), batches=data(shape, dtype, seed=9), rtol=3e-2, atol=3e-2
    )
    for name, shape in HALF_GRID
    for dtype in (torch.float16, torch.bfloat16)
]


@pytest.mark.parametrize("case", REGRESSION_CASES + DEFAULT_FLOAT64_CASES + HALF_CASES, ids=lambda c: c.name)
def test_regression_parity(case):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # adjusted R2 with few samples, Pearson's NaN: both warn
        check_parity(case)


FUNCTIONAL_GRID = (
    [
        ("mean_squared_error", dict(squared=sq, num_outputs=no), shape)
        for sq in (True, False)
        for no, shape in ((1, ()), (1, (2,)), (2, (2,)))
    ]
    + [("mean_absolute_error", dict(num_outputs=no), shape) for no, shape in ((1, ()), (3, (3,)))]
    + [("mean_absolute_percentage_error", {}, shape) for shape in ((), (2,))]
    + [
        ("r2_score", dict(adjusted=adj, multioutput=mo), shape)
        for adj in (0, 3)
        for mo in ("raw_values", "uniform_average", "variance_weighted")
        for shape in ((), (1,), (3,))
    ]
    + [
        ("explained_variance", dict(multioutput=mo), shape)
        for mo in ("raw_values", "uniform_average", "variance_weighted")
        for shape in ((), (1,), (2, 3))
    ]
    + [("pearson_corrcoef", {}, shape) for shape in ((), (1,), (3,))]
    + [("cosine_similarity", dict(reduction=red), (3,)) for red in ("sum", "mean", "none", None)]
)


@pytest.mark.parametrize("mixed", [False, True], ids=["same_dtype", "float32_preds_float64_target"])
@pytest.mark.parametrize(
    "name, kwargs, shape", FUNCTIONAL_GRID, ids=[f"{n}-{k}-{list(s)}" for n, k, s in FUNCTIONAL_GRID]
)
def test_functional(name, kwargs, shape, mixed):
    preds, target = data(shape, torch.float64, seed=3, positive="percentage" in name)[1]
    if mixed:
        preds = preds.float()
    ours, theirs = getattr(ttf, name), getattr(tmf, name)
    assert_same_result(ours(preds, target, **kwargs), theirs(preds, target, **kwargs))
    # integer inputs: torch's default dtype (where torchmetrics takes them; its R2, explained
    # variance and Pearson fail on integers, torchtally's give the float inputs' value)
    ints = (preds * 3).round().long(), (target * 3).round().long()
    if name in ("mean_squared_error", "mean_absolute_error", "mean_absolute_percentage_error", "cosine_similarity"):
        assert_same_result(ours(*ints, **kwargs), theirs(*ints, **kwargs))
    else:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert_same_result(ours(*ints, **kwargs), theirs(*(x.float() for x in ints), **kwargs))


@pytest.mark.parametrize(
    "name", ["MeanSquaredError", "MeanAbsoluteError", "MeanAbsolutePercentageError", "ExplainedVariance"]
)
def test_regression_over_an_empty_batch(name):
    empty = (torch.empty(0), torch.empty(0))
    ours, theirs = both(name, ttr, torchmetrics.regression)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert_same_result(run(ours, [empty]), run(theirs, [empty]))


# -- aggregation --------------------------------------------------------------------------------------


def copying_inputs(cls):
    """A torchmetrics class whose update works on copies: with a float nan_strategy torchmetrics
    writes into its inputs, and the parity cases share their batches."""

    class Copying(cls):
        def update(self, *args, **kwargs):
            return super().update(*(a.clone() if isinstance(a, torch.Tensor) else a for a in args), **kwargs)

    Copying.__name__ = Copying.__qualname__ = cls.__name__
    return Copying


TM_AGGREGATION = {name: copying_inputs(getattr(torchmetrics.aggregation, name)) for name in AGGREGATION_CLASSES}


def aggregation_case(name, batches, tag, **kwargs):
    # torchmetrics' RunningMean (its Running wrapper) reports update_count 0: its forward is
    # checked in test_running_mean_forward instead
    return ParityCase(
        f"{name}[{label(kwargs)}]-{tag}",
        P(getattr(tta, name), **kwargs),
        P(TM_AGGREGATION[name], **kwargs),
        batches=batches,
        forward=name != "RunningMean",
        **TOL,
    )


def values(kind, dtype, seed):
    g = torch.Generator().manual_seed(seed)
    if kind == "python":
        return [(1.5,), (-2.0,), (3.25,), (7,)]
    shape = {"flat": [(6,), (9,), (4,), (3,)], "rows": [(3, 2), (5, 2), (1, 2), (2, 2)]}[kind]
    batches = [(torch.randn(s, generator=g, dtype=torch.float64).to(dtype) * 3 + 1,) for s in shape]
    if kind == "flat":
        batches[1][0][2] = NAN
        batches[2][0][0] = NAN
    return batches


AGGREGATION_CASES = [
    aggregation_case(name, values(kind, dtype, seed=11), f"{kind}-{str(dtype)[6:]}", nan_strategy=strategy)
    for name in ("SumMetric", "MeanMetric", "MinMetric", "MaxMetric", "CatMetric")
    for strategy in ("warn", "ignore", "disable", 2.0, -1.5)
    for kind in ("python", "flat", "rows")
    for dtype in (torch.float32, torch.float64)
    if not (kind == "python" and dtype == torch.float64)
]


def weighted(weight, seed=7):
    g = torch.Generator().manual_seed(seed)
    batches = []
    for n in (4, 6, 3, 5):
        v = torch.randn(n, 2, generator=g) * 4
        v[0, 1] = NAN
        if weight == "tensor":
            w = torch.rand(n, 2, generator=g)
        elif weight == "column":
            w = torch.rand(n, 1, generator=g)
        elif weight == "nan":
            w = torch.rand(n, 2, generator=g)
            w[1, 0] = NAN
        else:
            w = weight
        batches.append((v, w))
    return batches


WEIGHTS = {"none": None, "number": 2.5, "tensor": "tensor", "broadcast": "column", "nan_weight": "nan"}
WEIGHTED_CASES = [
    aggregation_case(
        metric,
        weighted(weight),
        f"weights_{key}",
        nan_strategy=strategy,
        **({"window": 10} if metric == "RunningMean" else {}),
    )
    for metric in ("MeanMetric", "RunningMean")
    for key, weight in WEIGHTS.items()
    for strategy in ("warn", "ignore", 3.0)
    # a float strategy with a broadcast weight: torchmetrics writes the weight 1 into its expanded
    # weight tensor, which reaches every weight (test_float_strategy_with_broadcast_weights)
    if not (strategy == 3.0 and key in ("number", "broadcast"))
]
RUNNING_CASES = [  # windows shorter than the stream: per rank, so no distributed check
    aggregation_case(
        "RunningMean",
        [(torch.randn(n, generator=torch.Generator().manual_seed(n)),) for n in (3, 1, 4, 2, 6)],
        "stream",
        window=window,
    )
    for window in (1, 3)
]
DISTRIBUTED = REGRESSION_CASES + DEFAULT_FLOAT64_CASES + AGGREGATION_CASES + WEIGHTED_CASES


@pytest.mark.parametrize("case", AGGREGATION_CASES + WEIGHTED_CASES + RUNNING_CASES, ids=lambda c: c.name)
def test_aggregation_parity(case):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_parity(case)


@pytest.mark.distributed
def test_parity_on_two_ranks():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run_parity_distributed(DISTRIBUTED, world_size=2)


@pytest.mark.distributed
def test_parity_on_three_ranks_with_an_empty_one():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run_parity_distributed(DISTRIBUTED[::6], world_size=3)


@pytest.mark.parametrize(
    "case", [c for c in WEIGHTED_CASES + RUNNING_CASES if "RunningMean" in c.name], ids=lambda c: c.name
)
def test_running_mean_forward(case):
    """forward returns the batch's mean and moves the window, as torchmetrics' (whose
    update_count stays 0; torchtally's counts the batches)."""
    ours, theirs = case.ours(), case.theirs()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for batch in case.batches:
            assert_same_result(ours(*batch), theirs(*batch))
            assert_same_result(ours.compute(), theirs.compute())
    assert ours.update_count == len(case.batches)


@pytest.mark.parametrize("metric", ["MeanMetric", "RunningMean"])
def test_float_strategy_with_broadcast_weights(metric):
    """A deliberate difference: torchmetrics sets the weight of a NaN position to 1 in the
    broadcast (expanded) weight, which changes every weight; torchtally changes that position's
    only, which is torchmetrics' result for the same weights given in full."""
    kwargs = dict(nan_strategy=3.0, **({"window": 3} if metric == "RunningMean" else {}))
    ours, theirs = both(metric, tta, torchmetrics.aggregation, **kwargs)
    for weight in (2.5, "column"):
        for v, w in weighted(weight):
            ours.update(v, w)
            theirs.update(v.clone(), torch.broadcast_to(torch.as_tensor(w), v.shape).clone())
    assert_same_result(ours.compute(), theirs.compute())


@pytest.mark.parametrize("name", AGGREGATION_CLASSES)
def test_aggregation_over_empty_updates(name):
    ours, theirs = both(name, tta, torchmetrics.aggregation)
    ours.update(torch.empty(0))
    theirs.update(torch.empty(0))
    got, want = ours.compute(), theirs.compute()
    if name == "CatMetric":  # torchmetrics: an empty list; here an empty tensor (deliberate)
        assert want == [] and got.shape == (0,) and got.dtype == torch.get_default_dtype()
        return
    assert_same_result(got, want)


@pytest.mark.parametrize("name", AGGREGATION_CLASSES[:4])
def test_with_default_dtype_float64(name):
    """float64 results, and the float64 input's own sum/mean/min/max exactly (torchmetrics'
    test_with_default_dtype)."""
    previous = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        ours, theirs = both(name, tta, torchmetrics.aggregation)
    finally:
        torch.set_default_dtype(previous)
    v = torch.randn(10000, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    got = ours.update(v).compute()
    theirs.update(v)
    assert got.dtype == torch.float64
    assert (
        got
        == {"SumMetric": torch.sum, "MeanMetric": torch.mean, "MinMetric": torch.min, "MaxMetric": torch.max}[name](v)
        == theirs.compute()
    )


@pytest.mark.parametrize("name", AGGREGATION_CLASSES[:5])
def test_nan_error_raises_a_runtime_error_as_torchmetrics(name):
    ours, theirs = both(name, tta, torchmetrics.aggregation, nan_strategy="error")
    value = torch.tensor([1.0, NAN])
    with pytest.raises(RuntimeError) as caught:
        theirs.update(value.clone())
    with pytest.raises(RuntimeError, match=str(caught.value)):  # torchmetrics' words are in the message
        ours.update(value.clone())
    ours.update(torch.tensor([1.0, 3.0]))
    theirs.update(torch.tensor([1.0, 3.0]))
    assert_same_result(ours.compute(), theirs.compute())  # the rejected batch left no trace


@pytest.mark.parametrize("name", REGRESSION_CLASSES + AGGREGATION_CLASSES)
def test_compute_before_any_update_as_torchmetrics(name):
    """torchmetrics warns and computes over the empty state (NaN means, 0 sums, +-inf extremes;
    R2Score and CosineSimilarity raise ValueError); CatMetric: an empty tensor for its list."""
    module_tt, module_tm = (
        (ttr, torchmetrics.regression) if name in REGRESSION_CLASSES else (tta, torchmetrics.aggregation)
    )
    ours, theirs = both(name, module_tt, module_tm)
    outcomes = []
    for metric in (ours, theirs):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                outcomes.append(metric.compute())
            except ValueError as exc:
                outcomes.append(type(exc))
        assert caught, f"{type(metric).__module__}: no warning"
    got, want = outcomes
    if name == "CatMetric":
        assert want == [] and got.shape == (0,)
    elif isinstance(want, type):
        assert got is want
    else:
        assert_same_result(got, want)
