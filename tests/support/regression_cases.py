"""The regression cases of the shared tester: every configuration of the regression metrics with
its data (uneven batches, one empty) and its scikit-learn / scipy / numpy reference, and the
makers and references they are built from. tests/regression/test_mse.py runs each through
``check_metric`` in one process; tests/distributed/test_regression_aggregation.py runs them all
on 3 gloo ranks. The factories are pickled to those ranks by module name
(``support.metric_tester.made_in_float64``)."""

import functools

import numpy as np
import scipy.stats
import sklearn.metrics as skm
import torch

from support.metric_tester import CollectionFactory, MetricCase, made_in_float64
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
SIZES = (7, 0, 13, 5, 9, 1, 11)  # batch sizes: uneven, one empty batch, 46 samples


F64 = functools.partial(P, made_in_float64)  # F64(MeanSquaredError, squared=False)


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
        out.append(tuple(t[lo : lo + size] for t in tensors))
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
SIX_AS_2x3 = tuple(x.reshape(-1, 2, 3) for x in make_data(d=6, seed=6))  # [N, 2, 3] outputs
INTS = (
    torch.randint(-5, 6, (46,), generator=torch.Generator().manual_seed(4)),
    torch.randint(-5, 6, (46,), generator=torch.Generator().manual_seed(5)),
)


def case(name, factory, data, reference, rtol=1e-10, atol=1e-12):
    return MetricCase(name, factory, split(*data), reference, rtol=rtol, atol=atol)


# Most cases are made in float64 (results in float64) to check the values to 1e-10; the
# float32-result cases check the default dtype's rounding only.
CASES = [
    case("mse", F64(MeanSquaredError), FLAT, sk(skm.mean_squared_error)),
    case("mse_float32_result", MeanSquaredError, FLAT, sk(skm.mean_squared_error), rtol=1e-7),
    case("mse_int_inputs", F64(MeanSquaredError), INTS, sk(skm.mean_squared_error)),
    case("rmse", F64(MeanSquaredError, squared=False), ONE_F32, sk(skm.root_mean_squared_error), rtol=1e-6),
    case(
        "mse_3_outputs",
        F64(MeanSquaredError, num_outputs=3),
        THREE,
        sk(skm.mean_squared_error, multioutput="raw_values"),
    ),
    case("mse_offset", F64(MeanSquaredError), BIG, sk(skm.mean_squared_error)),
    case("mae", F64(MeanAbsoluteError), FLAT, sk(skm.mean_absolute_error)),
    case(
        "mae_3_outputs",
        F64(MeanAbsoluteError, num_outputs=3),
        THREE,
        sk(skm.mean_absolute_error, multioutput="raw_values"),
    ),
    case("mape", F64(MeanAbsolutePercentageError), POSITIVE, sk(skm.mean_absolute_percentage_error)),
    case("r2", R2Score, ONE, sk(skm.r2_score)),  # float64 inputs: float64 result, as torchmetrics
    case("r2_float32", F64(R2Score), ONE_F32, sk(skm.r2_score), rtol=1e-9),
    case("r2_raw", P(R2Score, multioutput="raw_values"), THREE, sk(skm.r2_score, multioutput="raw_values")),
    case(
        "r2_variance_weighted",
        P(R2Score, multioutput="variance_weighted"),
        THREE,
        sk(skm.r2_score, multioutput="variance_weighted"),
    ),
    case("r2_adjusted", P(R2Score, adjusted=3), ONE, adjusted_r2_ref(3)),
    case("r2_offset", R2Score, BIG, sk(skm.r2_score)),
    case("r2_offset_3", P(R2Score, multioutput="raw_values"), BIG3, sk(skm.r2_score, multioutput="raw_values")),
    case("explained_variance", ExplainedVariance, ONE, sk(skm.explained_variance_score)),
    case(
        "explained_variance_raw",
        P(ExplainedVariance, multioutput="raw_values"),
        THREE,
        sk(skm.explained_variance_score, multioutput="raw_values"),
    ),
    case(
        "explained_variance_weighted",
        P(ExplainedVariance, multioutput="variance_weighted"),
        THREE,
        sk(skm.explained_variance_score, multioutput="variance_weighted"),
    ),
    case("explained_variance_offset", ExplainedVariance, BIG, sk(skm.explained_variance_score)),
    case(
        "explained_variance_3d",
        P(ExplainedVariance, multioutput="raw_values"),
        SIX_AS_2x3,
        lambda p, t: skm.explained_variance_score(
            *np64(t.reshape(-1, 6), p.reshape(-1, 6)), multioutput="raw_values"
        ).reshape(2, 3),
    ),
    case("pearson", F64(PearsonCorrCoef), ONE, pearson_ref),
    case("pearson_3", P(PearsonCorrCoef, num_outputs=3), THREE, pearson_ref),
    case("pearson_offset", P(PearsonCorrCoef, num_outputs=3), BIG3, pearson_ref),
    # float32 results (torchmetrics'), whatever the default dtype
    case("cosine_sum", CosineSimilarity, THREE, cosine_ref("sum"), rtol=1e-7),
    case("cosine_mean", P(CosineSimilarity, reduction="mean"), THREE, cosine_ref("mean"), rtol=1e-7),
    case("cosine_none", F64(CosineSimilarity, reduction="none"), THREE, cosine_ref("none"), rtol=1e-7, atol=1e-7),
    # R2 and explained variance share one moments state in a collection (one merge slot).
    case(
        "collection_shared_moments",
        CollectionFactory(
            r2=R2Score,
            ev=ExplainedVariance,
            mse=F64(MeanSquaredError, num_outputs=3),
            pearson=P(PearsonCorrCoef, num_outputs=3),
        ),
        BIG3,
        lambda p, t: {
            "r2": sk(skm.r2_score)(p, t),
            "ev": sk(skm.explained_variance_score)(p, t),
            "mse": sk(skm.mean_squared_error, multioutput="raw_values")(p, t),
            "pearson": pearson_ref(p, t),
        },
    ),
]
