"""PSNR and PSNR-B against torchmetrics and scikit-image (float32, float64, float16, uint8;
data_range as a number, a clamping tuple or None; dim and every reduction; output dtypes);
bad input raises with the state unchanged; 2 gloo ranks (uneven shards, one rank empty) == one process."""

import functools
import warnings

import numpy as np
import pytest
import torch
from skimage.metrics import peak_signal_noise_ratio as sk_psnr
from support.metric_tester import MetricCase, assert_rejects, assert_same, check_metric, run_distributed_cases
from torchmetrics.functional.image import peak_signal_noise_ratio as tm_psnr
from torchmetrics.functional.image import peak_signal_noise_ratio_with_blocked_effect as tm_psnrb
from torchmetrics.image import PeakSignalNoiseRatio as TMPeakSignalNoiseRatio
from torchmetrics.image import PeakSignalNoiseRatioWithBlockedEffect as TMPeakSignalNoiseRatioWithBlockedEffect

from torchtally import kernels
from torchtally.functional.image import peak_signal_noise_ratio, peak_signal_noise_ratio_with_blocked_effect
from torchtally.image import PeakSignalNoiseRatio, PeakSignalNoiseRatioWithBlockedEffect


def _images(seed, n=2, c=3, size=16, dtype=torch.float32):
    g = torch.Generator().manual_seed(seed)
    target = torch.rand(n, c, size, size, generator=g)
    preds = (target + 0.1 * torch.randn(n, c, size, size, generator=g)).clamp(0, 1)
    return preds.to(dtype), target.to(dtype)


def _blocky(img, block=4):
    """Each block x block tile replaced by its mean: edges step more than insides (bef > 0)."""
    tiles = torch.nn.functional.avg_pool2d(img.float(), block)
    return tiles.repeat_interleave(block, -2).repeat_interleave(block, -1).to(img.dtype)


OPTIONS = [
    dict(data_range=1.0),
    dict(data_range=(0.2, 0.9), base=2.0),
    dict(data_range=1.0, dim=(1, 2, 3), reduction="none"),
    dict(data_range=(0.0, 1.0), dim=1, reduction="sum"),
    dict(data_range=1.0, dim=(-2, -1), reduction="elementwise_mean"),
    dict(data_range=1.0, dim=(0, 1, 2, 3), reduction="none"),
]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16])
def test_functional_against_torchmetrics(dtype):
    preds, target = _images(0, dtype=dtype)
    tol = dict(rtol=1e-5, atol=1e-5) if dtype != torch.float16 else dict(rtol=1e-2, atol=1e-2)
    for options in OPTIONS:
        got, want = peak_signal_noise_ratio(preds, target, **options), tm_psnr(preds, target, **options)
        assert got.dtype == want.dtype and got.shape == want.shape, (options, got, want)
        assert_same(got, want, what=str(options), **tol)
    for block_size, p in ((8, preds), (3, preds), (4, _blocky(preds)), (8, _blocky(preds, 8))):
        got = peak_signal_noise_ratio_with_blocked_effect(p[:, :1], target[:, :1], 1.0, block_size)
        want = tm_psnrb(p[:, :1], target[:, :1], 1.0, block_size)
        assert got.dtype == want.dtype
        assert_same(got, want, **tol)
    blocky = peak_signal_noise_ratio_with_blocked_effect(_blocky(preds)[:, :1], target[:, :1], 1.0, 4)
    assert blocky < peak_signal_noise_ratio(_blocky(preds)[:, :1], target[:, :1], 1.0) - 0.01  # the factor counts


def test_against_scikit_image_and_integer_inputs():
    preds, target = _images(1, dtype=torch.float64)
    want = np.mean([sk_psnr(t.numpy(), p.numpy(), data_range=1.0) for p, t in zip(preds, target)])
    got = peak_signal_noise_ratio(preds, target, 1.0, dim=(1, 2, 3))
    assert_same(got, want, rtol=1e-12)
    assert_same(peak_signal_noise_ratio(preds, target, 1.0), sk_psnr(target.numpy(), preds.numpy(), data_range=1.0))
    p8, t8 = (preds * 255).to(torch.uint8), (target * 255).to(torch.uint8)
    assert_same(peak_signal_noise_ratio(p8, t8, 255.0), sk_psnr(t8.numpy(), p8.numpy(), data_range=255), rtol=1e-6)
    assert_same(peak_signal_noise_ratio(p8, t8, 255.0), tm_psnr(p8, t8, 255.0), rtol=1e-5)
    # torchmetrics subtracts uint8 images in uint8 for PSNR-B; int64 ones it subtracts exactly
    got = peak_signal_noise_ratio_with_blocked_effect(p8[:, :1], t8[:, :1], 255.0)
    assert_same(got, tm_psnrb(p8[:, :1].long(), t8[:, :1].long(), 255.0), rtol=1e-5)
    # data_range=None: the targets' max - min
    width = float(target.max() - target.min())
    assert_same(peak_signal_noise_ratio(preds, target, None), tm_psnr(preds, target, width), rtol=1e-6)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32, torch.float64])
def test_the_squared_error_kernel_and_the_torch_route_agree_with_float64_psnr(dtype):
    # torchmetrics clamps in the inputs' dtype: (0.2, 0.9) is not representable in float16,
    # bfloat16 or float32, so a value clamped to 0.2 is that dtype's nearest value.
    preds, target = _images(4, size=40, dtype=dtype)
    for data_range in (1.0, (0.2, 0.9), None):
        p, t = preds, target
        if isinstance(data_range, tuple):
            p, t = p.clamp(*data_range), t.clamp(*data_range)
        p, t = p.double(), t.double()
        width = t.max() - t.min() if data_range is None else torch.tensor(np.ptp(data_range) or data_range)
        exact = 10 * torch.log10(width.double() ** 2 / (p - t).square().mean())
        for backend in ("c", "reference") if kernels.has_c() else ("reference",):
            previous = kernels.set_backend(backend)
            try:
                got = peak_signal_noise_ratio(preds, target, data_range)
                metric = PeakSignalNoiseRatio(data_range).update(preds[:1], target[:1]).update(preds[:0], target[:0])
                by_class = metric.update(preds[1:], target[1:]).compute()
            finally:
                kernels.set_backend(previous)
            assert by_class.dtype == torch.float32  # the class state's dtype; the function's inputs'
            for value in (got, by_class):
                rtol = 1e-12 if value.dtype == torch.float64 else 2e-7  # one float32 ulp
                assert_same(value, exact.to(value.dtype), rtol=rtol, what=f"{backend} {data_range}")
    assert PeakSignalNoiseRatio(None).update(preds[:0], target[:0]).target_min == float("inf")


def test_class_dtypes_and_warning():
    preds, target = _images(2, dtype=torch.float64)
    for options in OPTIONS:
        got = PeakSignalNoiseRatio(**options).update(preds, target).compute()
        tm = TMPeakSignalNoiseRatio(**options)
        tm.update(preds, target)
        want = tm.compute()
        assert got.dtype == want.dtype and got.shape == want.shape, (options, got.dtype, want.dtype)
        assert_same(got, want, rtol=1e-6, what=str(options))
    tm = TMPeakSignalNoiseRatioWithBlockedEffect(1.0)
    tm.update(preds[:, :1], target[:, :1])
    got = PeakSignalNoiseRatioWithBlockedEffect(1.0).update(preds[:, :1], target[:, :1]).compute()
    assert got.dtype == tm.compute().dtype == torch.float32
    with pytest.warns(UserWarning, match="`reduction=sum` will not have any effect"):
        PeakSignalNoiseRatio(1.0, reduction="sum")


def test_bad_input_raises_with_the_state_unchanged():
    preds, target = _images(3)
    m = PeakSignalNoiseRatio(1.0).update(preds, target)
    assert_rejects(m, (preds, target[:1]), ValueError, "target: expected the shape of preds")
    assert_rejects(m, (preds, target[:1]), RuntimeError, "same shape")
    assert_rejects(m, (preds.numpy(), target), TypeError, "preds: expected a torch.Tensor")
    assert_rejects(m, (preds, target.to(torch.complex64)), TypeError, "target")
    d = PeakSignalNoiseRatio(1.0, dim=(1, 2, 3), reduction="none").update(preds, target)
    assert_rejects(PeakSignalNoiseRatio(1.0, dim=4, reduction="none"), (preds, target), ValueError, "dim")
    assert_rejects(d, (preds[0], target[0]), ValueError, "dim: expected dims in")
    b = PeakSignalNoiseRatioWithBlockedEffect(1.0).update(preds[:, :1], target[:, :1])
    assert_rejects(b, (preds, target), ValueError, "grayscale")
    assert_rejects(b, (preds[0], target[0]), ValueError, "4-d")
    assert_rejects(b, (preds[:, :1, :1], target[:, :1, :1]), ValueError, "2 x 2")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for bad in (dict(data_range=0.0), dict(data_range=(1.0, 0.0)), dict(data_range=1.0, base=1.0)):
            with pytest.raises(ValueError, match="data_range|base"):
                PeakSignalNoiseRatio(**bad)
        with pytest.raises(ValueError, match="data_range: expected a value when dim"):
            PeakSignalNoiseRatio(None, dim=1)
        with pytest.raises(ValueError, match="reduction"):
            PeakSignalNoiseRatio(1.0, reduction="mean", dim=1)
        with pytest.raises(TypeError, match="data_range"):
            PeakSignalNoiseRatioWithBlockedEffect(None)
        with pytest.raises(ValueError, match="block_size"):
            PeakSignalNoiseRatioWithBlockedEffect(1.0, block_size=0)


@pytest.mark.parametrize("backend", ["c", "reference"])
def test_a_fixed_range_adds_its_squared_errors_in_place_in_one_kernel_pass(backend):
    # data_range a number: the states are added into by the error-sums kernel; NaN or infinity
    # in either input is refused naming it, the states unchanged; other dtypes, strided and
    # grad-requiring inputs give the float64 value
    if backend == "c" and not kernels.has_c():
        pytest.skip("no C core")
    previous = kernels.set_backend(backend)
    try:
        preds, target = _images(7, n=3, size=24, dtype=torch.float64)
        m = PeakSignalNoiseRatio(1.0)
        state = m.sum_squared_error
        m.update(preds[:1].float(), target[:1].float())
        assert m.sum_squared_error is state  # added in place: no new tensor per update
        for bad, name in ((preds.clone(), "preds"), (target.clone(), "target")):
            bad[1, 2, 3, 4] = float("nan") if name == "preds" else float("inf")
            args = (bad, target) if name == "preds" else (preds, bad)
            assert_rejects(m, tuple(a[1:].float() for a in args), ValueError, f"{name}: expected finite values")
        m.update(preds[1:].float().transpose(2, 3), target[1:].float().transpose(2, 3))  # strided
        m.update(preds[:0].float(), target[:0].float())
        exact = 10 * torch.log10(1.0 / (preds.float().double() - target.float().double()).square().mean())
        assert_same(m.compute(), exact.float(), rtol=2e-7)
        g = PeakSignalNoiseRatio(1.0).update(preds.requires_grad_(), target)
        assert_same(g.compute(), (10 * torch.log10(1.0 / (preds.detach() - target).square().mean())).float(), rtol=2e-7)
        assert int(g.total) == preds.numel()
    finally:
        kernels.set_backend(previous)


def _batches(seed, count, c=3, blocky=False):
    batches = [_images(seed + i, n=1 + i % 3, c=c) for i in range(count)]
    return [(_blocky(p) if blocky and i % 2 else p, t) for i, (p, t) in enumerate(batches)]


def _range_of_targets(preds, target):
    return tm_psnr(preds, target, float(target.max() - target.min()))


def _psnrb_per_batch(batches):
    tm = TMPeakSignalNoiseRatioWithBlockedEffect(data_range=(0.0, 0.95), block_size=4)
    for p, t in batches:
        tm.update(p, t)
    return tm.compute()


CASES = [
    MetricCase(
        "psnr-fixed-range",
        functools.partial(PeakSignalNoiseRatio, data_range=1.0),
        batches=_batches(5, 6),
        reference=functools.partial(tm_psnr, data_range=1.0),
        rtol=1e-5,
    ),
    MetricCase(
        "psnr",
        functools.partial(PeakSignalNoiseRatio, data_range=(0.1, 0.9)),
        batches=_batches(10, 6),
        reference=functools.partial(tm_psnr, data_range=(0.1, 0.9)),
        rtol=1e-5,
    ),
    MetricCase(
        "psnr-range-of-targets",
        functools.partial(PeakSignalNoiseRatio, data_range=None),
        batches=_batches(20, 6),
        reference=_range_of_targets,
        rtol=1e-5,
    ),
    MetricCase(
        "psnr-per-image",
        functools.partial(PeakSignalNoiseRatio, data_range=1.0, base=2.0, reduction="none", dim=(1, 2, 3)),
        batches=_batches(30, 6),
        reference=functools.partial(tm_psnr, data_range=1.0, base=2.0, reduction="none", dim=(1, 2, 3)),
        rtol=1e-5,
    ),
    MetricCase(
        "psnr-per-channel-sum",
        functools.partial(PeakSignalNoiseRatio, data_range=1.0, reduction="sum", dim=(2, 3)),
        batches=_batches(40, 6),
        reference=functools.partial(tm_psnr, data_range=1.0, reduction="sum", dim=(2, 3)),
        rtol=1e-5,
    ),
    MetricCase(
        "psnrb",
        functools.partial(PeakSignalNoiseRatioWithBlockedEffect, data_range=(0.0, 0.95), block_size=4),
        batches=_batches(50, 6, c=1, blocky=True),
        reference=_psnrb_per_batch,
        reference_on_batches=True,
        rtol=1e-5,
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_lifecycle(case):
    check_metric(case)


@pytest.mark.distributed
def test_distributed_uneven_shards_equal_one_process():
    run_distributed_cases(CASES, world_size=2)
