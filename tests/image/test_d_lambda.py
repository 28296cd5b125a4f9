"""SpectralDistortionIndex, SpatialDistortionIndex and QualityWithNoReference against
torchmetrics' functions and classes (float32, float64; without pan_lr against torchmetrics given
the degraded pan it would make: its uniform filter, then torchvision's bilinear resize, which is
F.interpolate without antialias); bad input raises with the state unchanged; 3 gloo ranks with
uneven shards == one process (one run)."""

import functools
import warnings

import pytest
import torch
import torch.nn.functional as F
import torchmetrics.functional.image as tmf
import torchmetrics.image as tmi
from support.metric_tester import MetricCase, assert_rejects, assert_same, check_metric, run_distributed_cases
from torchmetrics.functional.image.utils import _uniform_filter

import torchtally.functional.image as ttf
from torchtally.image import QualityWithNoReference, SpatialDistortionIndex, SpectralDistortionIndex

pytestmark = pytest.mark.usefixtures("one_intra_op_thread")


def _images(seed, n=2, c=3, dtype=torch.float32, with_lr=True):
    g = torch.Generator().manual_seed(seed)
    pan = torch.rand(n, c, 32, 32, generator=g, dtype=torch.float64)
    preds = pan + 0.2 * torch.rand(n, c, 32, 32, generator=g, dtype=torch.float64)
    ms = F.avg_pool2d(preds, 2) + 0.05 * torch.rand(n, c, 16, 16, generator=g, dtype=torch.float64)
    target = {"ms": ms.to(dtype), "pan": pan.to(dtype)}
    if with_lr:
        target["pan_lr"] = F.avg_pool2d(pan, 2).to(dtype)
    return preds.to(dtype), target


def _tm_pan_lr(pan, ms, window_size):
    """The pan_lr torchmetrics makes without one (torchvision's resize = this interpolate)."""
    blurred = _uniform_filter(pan, window_size)
    return F.interpolate(blurred, size=ms.shape[-2:], mode="bilinear", align_corners=False, antialias=False)


def _tol(dtype):
    """torchmetrics keeps the mean UQI values in float32 tensors whatever the inputs' dtype."""
    return dict(rtol=1e-4, atol=1e-5) if dtype == torch.float32 else dict(rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_functions_against_torchmetrics(dtype):
    preds, target = _images(0, dtype=dtype)
    ms, pan, pan_lr = target["ms"], target["pan"], target["pan_lr"]
    made = _tm_pan_lr(pan, ms, 5)
    tol = _tol(dtype)
    for reduction, q in (("elementwise_mean", 1), ("sum", 3), ("none", 2)):
        got = ttf.spectral_distortion_index(preds, ms, q, reduction)
        assert_same(got, tmf.spectral_distortion_index(preds, ms, q, reduction), **tol)
        got = ttf.spatial_distortion_index(preds, ms, pan, pan_lr, q, 5, reduction)
        want = tmf.spatial_distortion_index(preds, ms, pan, pan_lr, q, 5, reduction)
        assert got.dtype == want.dtype == torch.float32 and got.shape == want.shape
        assert_same(got, want, **tol)
        got = ttf.spatial_distortion_index(preds, ms, pan, None, q, 5, reduction)
        assert_same(got, tmf.spatial_distortion_index(preds, ms, pan, made, q, 5, reduction), **tol)
    got = ttf.quality_with_no_reference(preds, ms, pan, None, 0.5, 2, 2, 5, "none")
    want = tmf.quality_with_no_reference(preds, ms, pan, made, 0.5, 2, 2, 5, "none")
    assert got.shape == want.shape
    assert_same(got, want, **tol)
    one = preds[:, :1], ms[:, :1]
    assert_same(
        ttf.spectral_distortion_index(*one, reduction="none"), tmf.spectral_distortion_index(*one, reduction="none")
    )


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_classes_against_torchmetrics_classes(dtype):
    batches = [_images(10 + i, n=1 + i % 2, dtype=dtype) for i in range(3)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pairs = [
            (SpatialDistortionIndex(2, 5, "none"), tmi.SpatialDistortionIndex(2, 5, "none")),
            (QualityWithNoReference(0.5, 2, 2, 5), tmi.QualityWithNoReference(0.5, 2, 2, 5)),
        ]
        d_lambda, tm_d_lambda = SpectralDistortionIndex(p=2), tmi.SpectralDistortionIndex(p=2)
    for preds, target in batches:
        d_lambda.update(preds, target["ms"])
        tm_d_lambda.update(preds, target["ms"])
        for ours, theirs in pairs:
            ours.update(preds, target)
            theirs.update(preds, target)
    pairs.append((d_lambda, tm_d_lambda))
    for ours, theirs in pairs:
        got, want = ours.compute(), theirs.compute()
        assert got.dtype == want.dtype and got.shape == want.shape
        assert_same(got, want, what=type(ours).__name__, **_tol(dtype))


def test_bad_input_raises_with_the_state_unchanged():
    preds, target = _images(3)
    ms, pan = target["ms"], target["pan"]
    d_lambda = SpectralDistortionIndex().update(preds, ms)
    assert_rejects(d_lambda, (preds, ms.double()), TypeError, "target: expected the dtype")
    assert_rejects(d_lambda, (preds, ms[:, :2]), ValueError, "target: expected the batch and channel")
    assert_rejects(d_lambda, (preds[:, :2], ms[:, :2]), ValueError, "number of channels")
    assert_rejects(d_lambda, (preds[0], ms[0]), ValueError, "preds: expected")
    for m in (SpatialDistortionIndex(), QualityWithNoReference()):
        m.update(preds, target)
        assert_rejects(m, (preds, {"pan": pan}), ValueError, "'ms'")
        assert_rejects(m, (preds, (ms, pan)), TypeError, "target: expected a dict")
        assert_rejects(m, (preds, {"ms": ms, "pan": pan[..., :16]}), ValueError, "pan: expected the height")
        assert_rejects(m, (preds, {"ms": ms[..., :15], "pan": pan}), ValueError, "ms: expected a height and width")
        assert_rejects(m, (preds, {"ms": ms, "pan": pan, "pan_lr": pan}), ValueError, "pan_lr: expected the height")
        assert_rejects(m, (preds, {"ms": ms, "pan": pan.double()}), TypeError, "pan: expected the dtype")
        assert_rejects(m, (preds[:, :2], {"ms": ms[:, :2], "pan": pan[:, :2]}), ValueError, "number of channels")
    small = SpatialDistortionIndex(window_size=8).update(preds, target)
    assert_rejects(
        small, (preds[..., :16, :16], {"ms": ms[..., :8, :8], "pan": pan[..., :16, :16]}), ValueError, "window_size"
    )
    for cls, bad in (
        (SpectralDistortionIndex, dict(p=0)),
        (SpatialDistortionIndex, dict(norm_order=1.5)),
        (QualityWithNoReference, dict(alpha=-1)),
        (QualityWithNoReference, dict(reduction="mean")),
    ):
        with pytest.raises(ValueError, match=next(iter(bad))):
            cls(**bad)


def test_errors_carry_torchmetrics_words_after_the_argument_they_name():
    # Code written against torchmetrics matches its messages (pytest.raises(match=...)).
    preds, target = _images(4)
    ms, pan = target["ms"], target["pan"]
    cases = [
        (ttf.spectral_distortion_index, (preds, ms.double()), "target: expected", "Expected `ms` and `fused` to have"),
        (ttf.spectral_distortion_index, (preds, ms, 0), "Expected `p` to be", "Got p: 0."),
        (ttf.spatial_distortion_index, (preds, ms[0], pan), "ms: expected", "Expected `ms` to have BxCxHxW shape"),
        (ttf.spatial_distortion_index, (preds, ms, pan[..., :31]), "pan: expected", "`pan` to have the same width"),
        (ttf.spatial_distortion_index, (preds, ms[..., :15, :], pan), "ms: expected", "height of `preds` to be mult"),
        (ttf.quality_with_no_reference, (preds, ms, pan, None, -1), "Expected `alpha`", "Got alpha: -1."),
        (ttf.universal_image_quality_index, (preds, pan, (11, 10)), "kernel_size: expected", "odd positive number"),
        (ttf.universal_image_quality_index, (preds[0], pan[0]), "preds: expected", "`target` to have BxCxHxW"),
    ]
    for fn, args, ours, theirs in cases:
        with pytest.raises((TypeError, ValueError)) as raised:
            fn(*args)
        assert ours in str(raised.value) and theirs in str(raised.value), (fn.__name__, str(raised.value))


def _batches(dtype, with_lr, count=5):
    return [_images(20 + i, n=1 + i % 3, dtype=dtype, with_lr=with_lr) for i in range(count)]


def _joined(preds, targets):
    """Targets of the batches (a list of dicts) joined key by key."""
    return {key: torch.cat([t[key] for t in targets]) for key in targets[0]}


def _d_s_reference(preds, targets, **kw):
    t = _joined(preds, targets)
    pan_lr = t.get("pan_lr", _tm_pan_lr(t["pan"], t["ms"], kw.get("window_size", 7)))
    return tmf.spatial_distortion_index(preds, t["ms"], t["pan"], pan_lr, **kw)


def _qnr_reference(preds, targets, **kw):
    t = _joined(preds, targets)
    return tmf.quality_with_no_reference(preds, t["ms"], t["pan"], t["pan_lr"], **kw)


def _ms_of(batches):
    return [(p, t["ms"]) for p, t in batches]


CASES = [
    MetricCase(
        "d_lambda-f32",
        SpectralDistortionIndex,
        _ms_of(_batches(torch.float32, False)),
        tmf.spectral_distortion_index,
        rtol=1e-5,
        atol=1e-6,
    ),
    MetricCase(
        "d_s-f64-no-pan_lr",
        functools.partial(SpatialDistortionIndex, 2, 5, "none"),
        _batches(torch.float64, False),
        lambda p, t: _d_s_reference(p, t, norm_order=2, window_size=5, reduction="none"),
        rtol=1e-6,
        atol=1e-7,
    ),
    MetricCase(
        "qnr-f64",
        functools.partial(QualityWithNoReference, 0.5, 2.0),
        _batches(torch.float64, True),
        lambda p, t: _qnr_reference(p, t, alpha=0.5, beta=2.0),
        rtol=1e-6,
        atol=1e-7,
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_lifecycle(case):
    check_metric(case)


@pytest.mark.distributed
def test_distributed_uneven_shards_equal_one_process():
    run_distributed_cases(CASES)
