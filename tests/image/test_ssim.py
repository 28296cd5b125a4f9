"""SSIM and MS-SSIM against torchmetrics (float16, float32, float64; Gaussian and uniform
windows, tuple data_range, 3-D volumes, per-image scores, full maps, contrast sensitivity) and
scikit-image; the C moments kernel against its torch reference; bad input raises with the state
unchanged; 2 gloo ranks with uneven shards == one process."""

import functools

import numpy as np
import pytest
import torch
from skimage.metrics import structural_similarity as sk_ssim
from support.metric_tester import MetricCase, assert_rejects, assert_same, check_metric, run_distributed_cases
from torchmetrics.functional.image import multiscale_structural_similarity_index_measure as tm_ms_ssim
from torchmetrics.functional.image import structural_similarity_index_measure as tm_ssim

from torchtally import kernels
from torchtally.functional.image import multiscale_structural_similarity_index_measure as ms_ssim
from torchtally.functional.image import structural_similarity_index_measure as ssim
from torchtally.image import MultiScaleStructuralSimilarityIndexMeasure, StructuralSimilarityIndexMeasure
from torchtally.kernels import reference
from torchtally.kernels.image import ssim as image_ssim


def _pair(seed, shape=(2, 3, 32, 32), dtype=torch.float32, noise=0.2):
    g = torch.Generator().manual_seed(seed)
    preds = torch.rand(shape, generator=g, dtype=torch.float64)
    target = (preds * 0.8 + noise * torch.rand(shape, generator=g, dtype=torch.float64)).clamp(0, 1)
    return preds.to(dtype), target.to(dtype)


OPTIONS = [
    {},
    {"gaussian_kernel": False, "kernel_size": 7, "reduction": "none"},
    {"sigma": (1.0, 2.0), "data_range": (0.1, 0.9), "reduction": "sum"},
    {"return_contrast_sensitivity": True, "data_range": 1.0},
    {"return_full_image": True, "k1": 0.02, "k2": 0.05},
]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_ssim_against_torchmetrics(dtype):
    preds, target = _pair(0, dtype=dtype)
    tol = dict(rtol=2e-5, atol=2e-6) if dtype == torch.float32 else dict(rtol=1e-10, atol=1e-12)
    for kwargs in OPTIONS:
        got, want = ssim(preds, target, **kwargs), tm_ssim(preds, target, **kwargs)
        assert_same(got, want, what=str(kwargs), **tol)
        assert (got[0] if isinstance(got, tuple) else got).dtype == dtype
    volumes = _pair(1, shape=(2, 1, 12, 14, 16), dtype=dtype)
    for kwargs in ({}, {"gaussian_kernel": False, "kernel_size": (3, 5, 7)}, {"sigma": 0.5, "kernel_size": 5}):
        assert_same(ssim(*volumes, **kwargs), tm_ssim(*volumes, **kwargs), what=f"3-D {kwargs}", **tol)
    half = [t.half() for t in _pair(2)]
    assert_same(ssim(*half).double(), ssim(*[t.double() for t in half]), rtol=1e-3)


def test_ms_ssim_against_torchmetrics():
    preds, target = _pair(3, shape=(2, 2, 64, 64), dtype=torch.float64)
    for kwargs in ({"betas": (0.3, 0.3, 0.4)}, {"betas": (0.5, 0.5), "normalize": "simple", "reduction": "none"}):
        assert_same(ms_ssim(preds, target, **kwargs), tm_ms_ssim(preds, target, **kwargs), rtol=1e-8, what=str(kwargs))
    big = _pair(4, shape=(1, 1, 180, 180))
    assert_same(ms_ssim(*big, data_range=1.0), tm_ms_ssim(*big, data_range=1.0), rtol=2e-5)
    volumes = _pair(5, shape=(1, 1, 24, 24, 24), dtype=torch.float64)
    kw = {"betas": (0.5, 0.5), "kernel_size": 5, "sigma": 0.7}
    assert_same(ms_ssim(*volumes, **kw), tm_ms_ssim(*volumes, **kw), rtol=1e-8)  # its betas are float32


def test_ssim_against_scikit_image():
    """skimage pads with edge-repeating reflection and crops the border before averaging: the
    maps' interiors agree, and the interior's mean is skimage's score."""
    preds, target = _pair(6, shape=(1, 3, 40, 36), dtype=torch.float64)
    score, full = ssim(preds, target, data_range=1.0, return_full_image=True)
    want, want_map = sk_ssim(
        preds[0].numpy(),
        target[0].numpy(),
        gaussian_weights=True,
        sigma=1.5,
        use_sample_covariance=False,
        data_range=1.0,
        channel_axis=0,
        full=True,
    )
    inner = full[0, :, 5:-5, 5:-5]
    np.testing.assert_allclose(inner.numpy(), want_map[:, 5:-5, 5:-5], rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(float(inner.mean()), want, rtol=1e-10)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_moments_kernel_against_its_reference(dtype):
    if not kernels.has_c():
        pytest.skip("torchtally._C is not built")
    g = torch.Generator().manual_seed(7)
    x = torch.rand(3, 19, 23, generator=g, dtype=dtype)
    y = torch.rand(3, 23, 19, generator=g, dtype=dtype).transpose(1, 2)  # strided planes
    for wh, ww, ph, pw in (
        (torch.rand(11, dtype=torch.float64), torch.rand(5, dtype=torch.float64), 5, 2),
        (torch.full((3,), 1 / 3, dtype=torch.float64), torch.ones(1, dtype=torch.float64), 4, 0),
    ):
        shape = (5, 3, 19 + 2 * ph - wh.numel() + 1, 23 + 2 * pw - ww.numel() + 1)
        got, want = torch.empty(shape, dtype=torch.float64), torch.empty(shape, dtype=torch.float64)
        kernels._C_MODULE.ssim_moments(got, x, y, wh, ww, ph, pw)
        reference.ssim_moments(want, x, y, wh, ww, ph, pw)
        assert_same(got, want, rtol=1e-13, atol=1e-15)
    out = torch.zeros(5, 3, 9, 23, dtype=torch.float64)
    for impl in (kernels._C_MODULE, reference):
        for args, err, match in (
            (
                (x, y, torch.ones(11, dtype=torch.float64), torch.ones(1, dtype=torch.float64), 19, 0),
                ValueError,
                "pad_h",
            ),
            (
                (x, y[:2], torch.ones(11, dtype=torch.float64), torch.ones(1, dtype=torch.float64), 0, 0),
                ValueError,
                "y",
            ),
            ((x, y, torch.ones(11), torch.ones(1, dtype=torch.float64), 0, 0), TypeError, "wh"),
            ((x, y, torch.ones(3, dtype=torch.float64), torch.ones(1, dtype=torch.float64), 0, 0), ValueError, "out"),
        ):
            with pytest.raises(err, match=match):
                impl.ssim_moments(out, *args)
        assert not out.any()


def test_c_and_torch_routes_agree():
    preds, target = _pair(8)
    c = ssim(preds, target, reduction="none")
    previous = kernels.set_backend("reference")
    try:
        torch_route = ssim(preds, target, reduction="none")
    finally:
        kernels.set_backend(previous)
    assert_same(c, torch_route, rtol=1e-12)
    assert image_ssim.ssim_moments is not None


def test_bad_input_raises_with_the_state_unchanged():
    preds, target = _pair(9)
    m = StructuralSimilarityIndexMeasure(data_range=1.0).update(preds, target)
    assert_rejects(m, (preds[0], target[0]), ValueError, "preds")
    assert_rejects(m, (preds, target[:1]), ValueError, "target")
    assert_rejects(m, ((preds * 10).long(), target), TypeError, "preds")
    nan = preds.clone()
    nan[0, 0, 3, 3] = float("nan")
    assert_rejects(m, (nan, target), ValueError, "preds: expected finite")
    assert_rejects(m, (preds[..., :5], target[..., :5]), ValueError, "too small")
    volume = (preds[:, :, None].expand(-1, -1, 12, -1, -1), target[:, :, None].expand(-1, -1, 12, -1, -1))
    assert_rejects(
        StructuralSimilarityIndexMeasure(sigma=(1.5, 1.5)).update(preds, target), volume, ValueError, "sigma"
    )
    assert_rejects(StructuralSimilarityIndexMeasure(kernel_size=(11,)), (preds, target), ValueError, "kernel_size")
    ms = MultiScaleStructuralSimilarityIndexMeasure(betas=(0.5, 0.5), kernel_size=5, sigma=0.7).update(preds, target)
    assert_rejects(ms, (preds[..., :3], target[..., :3]), ValueError, "preds")
    for kwargs, match in (
        ({"kernel_size": 4, "gaussian_kernel": False}, "kernel_size"),
        ({"sigma": -1.0}, "sigma"),
        ({"data_range": 0.0}, "data_range"),
        ({"data_range": (1.0, 0.0)}, "data_range"),
        ({"reduction": "max"}, "reduction"),
        ({"return_full_image": True, "return_contrast_sensitivity": True}, "return_full_image"),
    ):
        with pytest.raises(ValueError, match=match):
            StructuralSimilarityIndexMeasure(**kwargs)
    with pytest.raises(ValueError, match="betas"):
        MultiScaleStructuralSimilarityIndexMeasure(betas=(1, 2))
    with pytest.raises(ValueError, match="normalize"):
        MultiScaleStructuralSimilarityIndexMeasure(normalize="max")


def _batches(seed, count, shape=(2, 3, 32, 32)):
    return [_pair(seed + i, shape=(1 + i % 3, *shape[1:])) for i in range(count)]


def _tm_per_batch(fn, **kwargs):
    def reference(batches):
        per_image = torch.cat([fn(p, t, reduction="none", **kwargs).double() for p, t in batches])
        return per_image.mean()

    return reference


def _tm_full(batches):
    scores = torch.cat([tm_ssim(p, t, data_range=1.0, reduction="none") for p, t in batches])
    maps = torch.cat([tm_ssim(p, t, data_range=1.0, return_full_image=True)[1] for p, t in batches])
    return scores, maps


MS = {"betas": (0.3, 0.3, 0.4), "kernel_size": 5, "sigma": 0.8}
CASES = [
    MetricCase(
        "ssim-batch-range",
        StructuralSimilarityIndexMeasure,
        batches=_batches(10, 5),
        reference=_tm_per_batch(tm_ssim),
        reference_on_batches=True,
        rtol=2e-5,
        atol=2e-6,
    ),
    MetricCase(
        "ssim-full-image",
        functools.partial(StructuralSimilarityIndexMeasure, data_range=1.0, reduction="none", return_full_image=True),
        batches=_batches(20, 4, shape=(1, 2, 24, 20)),
        reference=_tm_full,
        reference_on_batches=True,
        rtol=2e-5,
        atol=2e-6,
    ),
    MetricCase(
        "ms-ssim-sum",
        functools.partial(MultiScaleStructuralSimilarityIndexMeasure, data_range=1.0, reduction="sum", **MS),
        batches=_batches(30, 4, shape=(1, 1, 24, 24)),
        reference=lambda p, t: tm_ms_ssim(p, t, data_range=1.0, reduction="sum", **MS),
        rtol=2e-5,
        atol=2e-6,
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_lifecycle(case):
    check_metric(case)


@pytest.mark.distributed
def test_distributed_uneven_shards():
    run_distributed_cases(CASES, world_size=2)
