"""Spectral angle mapper and ERGAS against torchmetrics (float32, float64, float16; every
reduction; output dtypes) and a numpy loop; angles of equal spectra are 0; bad input raises with
the state unchanged; 2 gloo ranks (uneven shards, and one rank empty) == one process."""

import functools

import numpy as np
import pytest
import torch
from support.metric_tester import MetricCase, assert_rejects, assert_same, check_metric, run_distributed_cases
from torchmetrics.functional.image import error_relative_global_dimensionless_synthesis as tm_ergas
from torchmetrics.functional.image import spectral_angle_mapper as tm_sam
from torchmetrics.image import ErrorRelativeGlobalDimensionlessSynthesis as TMErgas
from torchmetrics.image import SpectralAngleMapper as TMSpectralAngleMapper

from torchtally.functional.image import error_relative_global_dimensionless_synthesis, spectral_angle_mapper
from torchtally.image import ErrorRelativeGlobalDimensionlessSynthesis, SpectralAngleMapper

REDUCTIONS = ("elementwise_mean", "sum", "none", None)


def _images(seed, n=2, c=4, size=10, dtype=torch.float32):
    g = torch.Generator().manual_seed(seed)
    target = torch.rand(n, c, size, size, generator=g) + 0.1
    preds = target + 0.2 * torch.rand(n, c, size, size, generator=g)
    return preds.to(dtype), target.to(dtype)


def _numpy_sam(preds, target):
    p, t = preds.double().numpy(), target.double().numpy()
    cos = (p * t).sum(1) / (np.linalg.norm(p, axis=1) * np.linalg.norm(t, axis=1))
    return np.arccos(np.clip(cos, -1, 1))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16])
def test_functional_against_torchmetrics(dtype):
    preds, target = _images(0, dtype=dtype)
    tol = dict(rtol=1e-4, atol=1e-4) if dtype != torch.float16 else dict(rtol=2e-3, atol=2e-3)
    # float16: torchmetrics' arccosine of a float16 cosine is off by up to 0.04 rad near 0, so
    # the values are compared with torchmetrics on the same values in float64
    for reduction in REDUCTIONS:
        for ours, theirs, kwargs in (
            (spectral_angle_mapper, tm_sam, {}),
            (error_relative_global_dimensionless_synthesis, tm_ergas, dict(ratio=2)),
        ):
            got = ours(preds, target, reduction=reduction, **kwargs)
            want = theirs(preds, target, reduction=reduction, **kwargs)
            assert got.dtype == want.dtype and got.shape == want.shape, (ours.__name__, reduction)
            if dtype == torch.float16:
                want = theirs(preds.double(), target.double(), reduction=reduction, **kwargs)
            assert_same(got, want, what=f"{ours.__name__} {reduction}", **tol)
    if dtype == torch.float64:
        assert_same(spectral_angle_mapper(preds, target, "none"), _numpy_sam(preds, target), rtol=1e-9)
        assert_same(tm_sam(preds, preds, "none"), torch.zeros(2, 10, 10), atol=1e-7)
    assert torch.equal(spectral_angle_mapper(preds, preds, "none"), torch.zeros(2, 10, 10, dtype=dtype))


@pytest.mark.filterwarnings("ignore:Metric `.*` will save all")  # torchmetrics keeps both images
def test_classes_against_torchmetrics():
    preds, target = _images(1, dtype=torch.float64)
    for reduction in REDUCTIONS:
        pairs = ((SpectralAngleMapper, TMSpectralAngleMapper), (ErrorRelativeGlobalDimensionlessSynthesis, TMErgas))
        for ours, theirs in pairs:
            tm = theirs(reduction=reduction)
            tm.update(preds, target)
            tm.update(preds[:1], target[:1])
            want = tm.compute()
            got = ours(reduction=reduction).update(preds, target).update(preds[:1], target[:1]).compute()
            assert got.dtype == want.dtype and got.shape == want.shape, (ours.__name__, reduction, got.dtype)
            assert_same(got, want, rtol=1e-6, atol=1e-9)


def test_bad_input_raises_with_the_state_unchanged():
    preds, target = _images(2)
    for make in (SpectralAngleMapper, ErrorRelativeGlobalDimensionlessSynthesis):
        for reduction in ("elementwise_mean", "none"):
            m = make(reduction=reduction).update(preds, target)
            assert_rejects(m, (preds, target[:, :1]), RuntimeError, "same shape")
            assert_rejects(m, (preds, target[:, :1]), ValueError, "target: expected the shape of preds")
            assert_rejects(m, (preds[0], target[0]), ValueError, "BxCxHxW")
            assert_rejects(m, (preds, target.double()), TypeError, "same data type")
            assert_rejects(m, (preds.long(), target.long()), TypeError, "preds: expected a floating point")
        with pytest.raises(ValueError, match="reduction"):
            make(reduction="mean")
    m = SpectralAngleMapper(reduction="none").update(preds, target)
    assert_rejects(m, (preds[..., :5], target[..., :5]), ValueError, "expected images of 10 x 10")
    assert_rejects(m, (preds[:, :1], target[:, :1]), ValueError, "larger than 1")
    with pytest.raises(ValueError, match="ratio"):
        ErrorRelativeGlobalDimensionlessSynthesis(ratio=0)


def _batches(seed, count):
    return [_images(seed + i, n=1 + i % 3) for i in range(count)]


def _sam_in_float64(preds, target):
    # torchmetrics' float32 arccosine is off by up to 5e-4 rad for small angles
    return tm_sam(preds.double(), target.double(), reduction="none")


CASES = [
    MetricCase("sam-mean", SpectralAngleMapper, batches=_batches(10, 6), reference=tm_sam, rtol=1e-5),
    MetricCase(
        "sam-none",
        functools.partial(SpectralAngleMapper, reduction="none"),
        batches=_batches(20, 6),
        reference=_sam_in_float64,
        rtol=1e-5,
        atol=1e-6,
    ),
    MetricCase(
        "ergas-sum",
        functools.partial(ErrorRelativeGlobalDimensionlessSynthesis, ratio=2, reduction="sum"),
        batches=_batches(30, 6),
        reference=functools.partial(tm_ergas, ratio=2, reduction="sum"),
        rtol=1e-5,
    ),
    MetricCase(
        "ergas-none",
        functools.partial(ErrorRelativeGlobalDimensionlessSynthesis, reduction=None),
        batches=_batches(40, 6),
        reference=functools.partial(tm_ergas, reduction=None),
        rtol=1e-5,
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_lifecycle(case):
    check_metric(case)


@pytest.mark.distributed
def test_distributed_uneven_shards_equal_one_process():
    run_distributed_cases(CASES, world_size=2)
