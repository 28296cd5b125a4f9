"""procrustes_disparity and ProcrustesDisparity against scipy.spatial.procrustes (per item, on
seeded random clouds of several shapes) and torchmetrics 1.9 (values, scale, rotation, dtypes);
edge cases (no item, a perfect fit, a degenerate item); bad input raises with the state
unchanged; 3 gloo ranks with uneven shards (one empty) == one process."""

import functools

import numpy as np
import pytest
import torch
from scipy.spatial import procrustes as scipy_procrustes
from support.doctests import package_doctests
from support.metric_tester import (
    MetricCase,
    assert_rejects,
    assert_same,
    check_metric,
    made_in_float64,
    run_distributed_cases,
)
from torchmetrics.functional.shape import procrustes_disparity as tm_procrustes_disparity
from torchmetrics.shape import ProcrustesDisparity as TMProcrustesDisparity

from torchtally.functional.shape import procrustes_disparity
from torchtally.shape import ProcrustesDisparity


def _clouds(seed, n=4, m=9, d=3, dtype=torch.float32):
    g = torch.Generator().manual_seed(seed)
    a = torch.randn(n, m, d, generator=g, dtype=torch.float64)
    # the second cloud: a noisy rotated, scaled and moved copy (disparities spread over (0, 1))
    q, _ = torch.linalg.qr(torch.randn(n, d, d, generator=g, dtype=torch.float64))
    noise = torch.rand(n, 1, 1, generator=g, dtype=torch.float64)
    b = 2.5 * a @ q + 3.0 + noise * torch.randn(n, m, d, generator=g, dtype=torch.float64)
    return a.to(dtype), b.to(dtype)


def _scipy(a, b):
    return np.array([scipy_procrustes(x.double().numpy(), y.double().numpy())[2] for x, y in zip(a, b)])


@pytest.mark.parametrize("shape", [(5, 3, 2), (4, 9, 3), (3, 40, 5), (2, 4, 6)])
def test_functional_matches_scipy(shape):
    for seed in range(3):
        a, b = _clouds(seed, *shape, dtype=torch.float64)
        got = procrustes_disparity(a, b)
        assert got.dtype == torch.float64 and got.shape == (shape[0],)
        assert_same(got, _scipy(a, b), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_functional_matches_torchmetrics(dtype):
    a, b = _clouds(7, 6, 12, 3, dtype=dtype)
    tol = {"rtol": 1e-4, "atol": 1e-5} if dtype == torch.float32 else {"rtol": 1e-9, "atol": 1e-12}
    got, want = procrustes_disparity(a, b), tm_procrustes_disparity(a, b)
    assert got.dtype == want.dtype and got.shape == want.shape
    assert_same(got, want, **tol)
    for ours, theirs in zip(procrustes_disparity(a, b, return_all=True), tm_procrustes_disparity(a, b, True)):
        assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
        assert_same(ours, theirs, **tol)


def test_a_perfect_fit_and_no_item():
    a, _ = _clouds(3, 3, 8, 3, dtype=torch.float64)
    rotation = torch.linalg.qr(torch.randn(3, 3, dtype=torch.float64, generator=torch.Generator().manual_seed(1)))[0]
    got = procrustes_disparity(a, -4.0 * a @ rotation + 1.5)
    assert float(got.abs().max()) < 1e-12
    empty = torch.empty(0, 5, 2)
    assert procrustes_disparity(empty, empty).shape == (0,)
    metric = ProcrustesDisparity().update(empty, empty)
    assert int(metric.total) == 0
    assert torch.isnan(metric.compute())  # a mean over no item, as torchmetrics' 0 / 0


@pytest.mark.parametrize("reduction", ["mean", "sum"])
def test_class_matches_torchmetrics(reduction):
    ours, theirs = ProcrustesDisparity(reduction=reduction), TMProcrustesDisparity(reduction=reduction)
    for seed in range(4):
        a, b = _clouds(seed, 1 + seed, 7, 2)
        assert_same(ours(a, b), theirs(a, b), rtol=1e-4, atol=1e-5)
    got, want = ours.compute(), theirs.compute()
    assert got.dtype == want.dtype and got.shape == want.shape
    assert_same(got, want, rtol=1e-5)


def test_bad_input_raises_with_the_state_unchanged():
    a, b = _clouds(5)
    metric = ProcrustesDisparity().update(a, b)
    flat = a.clone()
    flat[1] = 2.0  # every point of item 1 the same: no shape
    assert_rejects(metric, (flat, b), ValueError, "point_cloud1: .*more than one distinct point|point_cloud1")
    assert_rejects(metric, (a, b[:, :5]), ValueError, "same shape")
    assert_rejects(metric, (a[0], b[0]), ValueError, "3D tensors")
    assert_rejects(metric, (a, b.to(torch.int64)), TypeError, "point_cloud2.*floating")
    assert_rejects(metric, (a.numpy(), b), TypeError, "point_cloud1")
    nan = b.clone()
    nan[0, 0, 0] = float("nan")
    assert_rejects(metric, (a, nan), ValueError, "point_cloud2.*NaN")
    with pytest.raises(ValueError, match="one distinct point"):
        procrustes_disparity(a[:, :1], b[:, :1])
    with pytest.raises(ValueError, match="reduction"):
        ProcrustesDisparity(reduction="none")


def test_docstring_examples():
    for package in ("torchtally.shape", "torchtally.functional.shape"):
        failed, attempted = package_doctests(package)
        assert attempted > 0 and failed == 0, package


def _mean_of_scipy(a, b):
    return float(_scipy(a, b).mean())


def _sum_of_scipy(a, b):
    return float(_scipy(a, b).sum())


def _batches(seed, count):
    return [_clouds(seed + i, 1 + (i * 2) % 5, 6, 3, dtype=torch.float64) for i in range(count)]


CASES = [
    MetricCase(
        "procrustes-mean",
        functools.partial(made_in_float64, ProcrustesDisparity),  # float64 results: compared to 1e-9
        batches=_batches(0, 7),
        reference=_mean_of_scipy,
        rtol=1e-9,
    ),
    MetricCase(
        "procrustes-sum",
        functools.partial(ProcrustesDisparity, reduction="sum"),
        batches=_batches(20, 5),
        reference=_sum_of_scipy,
        rtol=1e-6,  # a float32 result
        max_collectives=3,
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_lifecycle(case):
    check_metric(case)


@pytest.mark.distributed
def test_distributed_uneven_shards_equal_one_process():
    run_distributed_cases(CASES)


def test_shape_errors_read_as_torchmetrics_ones():
    from torchtally.functional.shape import procrustes_disparity

    for catch in (ValueError, RuntimeError):  # different shapes: torchmetrics raises RuntimeError
        with pytest.raises(catch, match="same shape"):
            procrustes_disparity(torch.randn(2, 5, 3), torch.randn(2, 4, 3))
    with pytest.raises(ValueError, match="Expected both datasets to be 3D tensors of shape"):
        procrustes_disparity(torch.randn(5, 3), torch.randn(5, 3))


@pytest.mark.parametrize("noise", [0.0, 1e-9, 1e-4, 1.0, 100.0])
def test_the_class_singular_value_form_equals_scipy_from_perfect_to_poor_fits(noise):
    # the class sums 1 - s^2 (s the sum of singular values) instead of forming the aligned cloud:
    # equal to scipy to float64's absolute resolution whatever the fit
    g = torch.Generator().manual_seed(11)
    a = torch.randn(6, 30, 3, generator=g, dtype=torch.float64)
    q, _ = torch.linalg.qr(torch.randn(6, 3, 3, generator=g, dtype=torch.float64))
    b = 0.7 * a @ q - 2.0 + noise * torch.randn(6, 30, 3, generator=g, dtype=torch.float64)
    metric = ProcrustesDisparity(reduction="sum")
    metric.update(a, b)
    want = float(_scipy(a, b).sum())
    assert abs(float(metric.disparity) - want) <= 1e-13 + 1e-12 * want  # the float64 state
