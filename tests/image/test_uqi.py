"""UniversalImageQualityIndex, RootMeanSquaredErrorUsingSlidingWindow, RelativeAverageSpectralError
and SpatialCorrelationCoefficient against torchmetrics' functions and classes (float32, float64);
the float64 SCC against torchmetrics' own per-channel code run in float64; bad input raises with
the state unchanged; 3 gloo ranks with uneven shards == one process (one run)."""

import functools
import warnings

import pytest
import torch
import torchmetrics.functional.image as tmf
import torchmetrics.image as tmi
from support.metric_tester import MetricCase, assert_rejects, assert_same, check_metric, run_distributed_cases
from torchmetrics.functional.image.scc import _scc_per_channel_compute

import torchtally.functional.image as ttf
from torchtally.functional.image.windows import window_sums
from torchtally.image import (
    RelativeAverageSpectralError,
    RootMeanSquaredErrorUsingSlidingWindow,
    SpatialCorrelationCoefficient,
    UniversalImageQualityIndex,
)

pytestmark = pytest.mark.usefixtures("one_intra_op_thread")

LAPLACIAN = torch.tensor([[-1, -1, -1], [-1, 8, -1], [-1, -1, -1]])


def _pair(seed, n=2, c=2, h=16, w=18, dtype=torch.float32):
    g = torch.Generator().manual_seed(seed)
    target = torch.rand(n, c, h, w, generator=g, dtype=torch.float64) + 0.5
    preds = target + 0.3 * torch.rand(n, c, h, w, generator=g, dtype=torch.float64)
    return preds.to(dtype), target.to(dtype)


def _tol(dtype):
    return dict(rtol=1e-4, atol=1e-5) if dtype == torch.float32 else dict(rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_functions_against_torchmetrics(dtype):
    preds, target = _pair(0, dtype=dtype)
    tol = _tol(dtype)
    for kernel, sigma in (((11, 11), (1.5, 1.5)), ((3, 5), (0.8, 1.2))):
        for reduction in ("elementwise_mean", "sum", None):
            got = ttf.universal_image_quality_index(preds, target, kernel, sigma, reduction)
            want = tmf.universal_image_quality_index(preds, target, kernel, sigma, reduction)
            assert got.dtype == want.dtype and got.shape == want.shape
            assert_same(got, want, **tol)
    for window in (1, 4, 7):
        score, rmse_map = ttf.root_mean_squared_error_using_sliding_window(preds, target, window, True)
        want_score, want_map = tmf.root_mean_squared_error_using_sliding_window(preds, target, window, True)
        assert score.dtype == want_score.dtype
        assert_same(score, want_score, **tol)
        assert_same(rmse_map, want_map, **tol)
        assert_same(
            ttf.relative_average_spectral_error(preds, target, window),
            tmf.relative_average_spectral_error(preds, target, window),
            **tol,
        )
    for hp in (None, torch.tensor([[1.0, -2.0, 0.5], [0.25, 0.0, 0.25]])):
        for reduction in ("mean", "none"):
            got = ttf.spatial_correlation_coefficient(preds, target, hp, 5, reduction)
            want = tmf.spatial_correlation_coefficient(preds, target, hp, 5, reduction)
            assert got.dtype == torch.float32 and got.shape == want.shape
            assert_same(got, want, rtol=1e-4, atol=1e-5)
    assert_same(
        ttf.spatial_correlation_coefficient(preds[:, 0], target[:, 0]),
        tmf.spatial_correlation_coefficient(preds[:, 0], target[:, 0]),
        rtol=1e-4,
        atol=1e-5,
    )


def test_large_images_take_the_convolution_path():
    """Beyond 64 pixels along an axis the windows are convolutions, not band-matrix products."""
    preds, target = _pair(5, n=1, c=1, h=70, w=66, dtype=torch.float64)
    tol = _tol(torch.float64)
    assert_same(
        ttf.universal_image_quality_index(preds, target, (7, 5), (1.5, 1.0), None),
        tmf.universal_image_quality_index(preds, target, (7, 5), (1.5, 1.0), None),
        **tol,
    )
    assert_same(
        ttf.relative_average_spectral_error(preds, target, 9),
        tmf.relative_average_spectral_error(preds, target, 9),
        **tol,
    )
    hp = torch.tensor([[0.5, -1.0], [2.0, 0.25], [-1.0, 0.0]], dtype=torch.float64)
    exact = _scc_per_channel_compute(preds, target, hp[None, None], 6).mean((1, 2, 3))
    assert_same(ttf.spatial_correlation_coefficient(preds, target, hp, 6, "none"), exact.float(), rtol=1e-6)


@pytest.mark.parametrize("window", [1, 2, 3, 5, 8, 9, 13])
def test_window_sums_by_doubling_equal_a_box_convolution(window):
    """Beyond 64 pixels the box filter of RMSE-SW and the spatial distortion index sums windows
    by doubling (windows.window_sums); it equals a float64 box convolution, at any window."""
    x = torch.rand(2, 3, 70, 67, generator=torch.Generator().manual_seed(window), dtype=torch.float64) - 0.25
    box = torch.ones(1, 1, window, window, dtype=torch.float64)
    want = torch.nn.functional.conv2d(x.reshape(6, 1, 70, 67), box).reshape(2, 3, 71 - window, 68 - window)
    got = window_sums(window_sums(x, window, -2), window, -1)
    assert_same(got, want, rtol=1e-13, atol=1e-13)
    preds, target = _pair(window, n=2, c=2, h=70, w=66, dtype=torch.float64)
    score, rmse_map = ttf.root_mean_squared_error_using_sliding_window(preds, target, window, True)
    want_score, want_map = tmf.root_mean_squared_error_using_sliding_window(preds, target, window, True)
    assert_same(score, want_score, rtol=1e-12, atol=1e-14)
    assert_same(rmse_map, want_map, rtol=1e-12, atol=1e-14)


def test_scc_in_float64_is_torchmetrics_math_in_float64():
    """torchmetrics computes SCC in float32; on smooth images that loses digits. Its own
    per-channel code given float64 is the exact reference."""
    x = torch.linspace(0, 1, 2 * 16 * 16, dtype=torch.float64).reshape(2, 1, 16, 16) ** 2
    y = x + 0.1 * torch.rand(x.shape, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    exact = _scc_per_channel_compute(x, y, LAPLACIAN[None, None].double(), 8).mean((1, 2, 3))
    assert_same(ttf.spatial_correlation_coefficient(x, y, reduction="none"), exact.float(), rtol=1e-6)


def _uqi_by_convolution(preds, target, kernel, sigma, eps):
    """The UQI map the plain way, in float64 (torchmetrics' geometry): reflect padding, a 2-D
    Gaussian convolution of the five planes, then the crop."""
    pad_a, pad_b = (kernel[0] - 1) // 2, (kernel[1] - 1) // 2

    def gauss(k, s):
        x = torch.arange(k, dtype=torch.float64) - (k - 1) / 2
        g = torch.exp(-0.5 * (x / s) ** 2)
        return g / g.sum()

    window = torch.outer(gauss(kernel[0], sigma[0]), gauss(kernel[1], sigma[1]))[None, None]
    n, c, h, w = preds.shape
    p, t = preds.double(), target.double()
    planes = torch.cat((p, t, p * p, t * t, p * t)).reshape(-1, 1, h, w)
    planes = torch.nn.functional.pad(planes, (pad_a, pad_a, pad_b, pad_b), mode="reflect")
    filtered = torch.nn.functional.conv2d(planes, window)
    mp, mt, mpp, mtt, mpt = filtered.reshape(5, n, c, *filtered.shape[-2:]).unbind(0)
    var_p, var_t = (mpp - mp * mp).clamp(min=0), (mtt - mt * mt).clamp(min=0)
    score = 4 * mp * mt * (mpt - mp * mt) / ((mp * mp + mt * mt) * (var_p + var_t) + eps)
    return score[..., pad_a:-pad_a, pad_b:-pad_b]


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32, torch.float64])
def test_uqi_maps_equal_a_plain_convolution_on_strided_inputs(dtype):
    """The maps come from the windowed-moments kernel over the kept positions only (a slice or a
    smaller reflect padding where the window is not square): the same values as padding, a full
    2-D convolution and the crop, for sliced and strided images of every float dtype."""
    g = torch.Generator().manual_seed(7)
    wide = torch.rand(3, 6, 40, 44, generator=g, dtype=torch.float64) + 0.25
    preds = wide[:, ::2, 3:, ::2].to(dtype)  # [3, 3, 37, 22], strided in C, H and W
    target = (wide.flip(1)[:, 1::2, 3:, 1::2] * 0.8 + 0.1).to(dtype)
    eps = torch.finfo(dtype).eps
    for kernel, sigma in (((11, 11), (1.5, 1.5)), ((3, 7), (0.8, 1.6)), ((9, 3), (2.0, 0.7)), ((5, 5), (1.0, 1.0))):
        got = ttf.universal_image_quality_index(preds, target, kernel, sigma, reduction=None)
        want = _uqi_by_convolution(preds, target, kernel, sigma, eps)
        assert got.shape == want.shape
        assert_same(got.double(), want.to(dtype).double(), rtol=1e-10 if dtype == torch.float64 else 1e-2, atol=1e-12)
        mean = ttf.universal_image_quality_index(preds.double(), target.double(), kernel, sigma)
        assert_same(mean, _uqi_by_convolution(preds, target, kernel, sigma, 2.0**-52).mean(), rtol=1e-12)
    # a window of 1 keeps no position (torchmetrics' crop), and an empty batch gives empty maps
    assert ttf.universal_image_quality_index(preds, target, (1, 5), (1.0, 1.0), None).shape == (3, 3, 0, 14)
    assert ttf.universal_image_quality_index(preds[:0], target[:0], (3, 3), (1.0, 1.0), None).shape == (0, 3, 35, 20)


def _feed_both(ours, theirs, batches):
    for b in batches:
        ours.update(*b)
        theirs.update(*b)
    return ours.compute(), theirs.compute()


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_classes_against_torchmetrics_classes(dtype):
    batches = [_pair(10 + i, n=1 + i % 2, dtype=dtype) for i in range(3)]
    tol = _tol(dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pairs = [
            (UniversalImageQualityIndex(), tmi.UniversalImageQualityIndex()),
            (UniversalImageQualityIndex(reduction="sum"), tmi.UniversalImageQualityIndex(reduction="sum")),
            (UniversalImageQualityIndex(reduction="none"), tmi.UniversalImageQualityIndex(reduction="none")),
            (RootMeanSquaredErrorUsingSlidingWindow(5), tmi.RootMeanSquaredErrorUsingSlidingWindow(5)),
            (RelativeAverageSpectralError(5), tmi.RelativeAverageSpectralError(5)),
            (SpatialCorrelationCoefficient(window_size=4), tmi.SpatialCorrelationCoefficient(window_size=4)),
        ]
    for ours, theirs in pairs:
        got, want = _feed_both(ours, theirs, batches)
        assert got.dtype == want.dtype and got.shape == want.shape, (type(ours).__name__, got.dtype, want.dtype)
        assert_same(
            got,
            want,
            what=type(ours).__name__,
            **(tol if not isinstance(ours, SpatialCorrelationCoefficient) else _tol(torch.float32)),
        )


def test_bad_input_raises_with_the_state_unchanged():
    preds, target = _pair(3)
    for m in (
        UniversalImageQualityIndex(),
        UniversalImageQualityIndex(reduction="none"),
        RelativeAverageSpectralError(),
    ):
        m.update(preds, target)
        assert_rejects(m, (preds, target.double()), TypeError, "target: expected the dtype of preds")
        assert_rejects(m, (preds, target[:, :1]), ValueError, "target: expected the shape")
        assert_rejects(m, (preds[0], target[0]), ValueError, "preds: expected")
        assert_rejects(m, (preds.long(), target.long()), TypeError, "preds: expected a floating point")
    small = UniversalImageQualityIndex().update(preds, target)
    assert_rejects(small, (preds[..., :5, :5], target[..., :5, :5]), ValueError, "too small for kernel_size")
    none = UniversalImageQualityIndex(reduction="none").update(preds, target)
    assert_rejects(none, (preds[..., :14], target[..., :14]), ValueError, "UQI maps of shape")
    rase = RelativeAverageSpectralError().update(preds, target)
    assert_rejects(rase, (preds[..., :14], target[..., :14]), ValueError, "image shape")
    assert_rejects(rase, (preds[..., :4], target[..., :4]), ValueError, "window_size")
    scc = SpatialCorrelationCoefficient().update(preds, target)
    assert_rejects(scc, (preds[..., :5], target[..., :5]), ValueError, "window_size")
    assert_rejects(scc, (preds, target[:1]), ValueError, "target: expected the shape")
    for bad in (dict(kernel_size=(4, 4)), dict(sigma=(1.5, -1.0)), dict(reduction="mean")):
        with pytest.raises(ValueError, match=next(iter(bad))):
            UniversalImageQualityIndex(**bad)
    with pytest.raises(ValueError, match="window_size"):
        RootMeanSquaredErrorUsingSlidingWindow(0)
    with pytest.raises(ValueError, match="high_pass_filter"):
        SpatialCorrelationCoefficient(high_pass_filter=torch.ones(1, 3))


def _batches(dtype, count=5):
    return [_pair(20 + i, n=1 + i % 3, dtype=dtype) for i in range(count)]


def _uqi_none_reference(p, t):
    return tmf.universal_image_quality_index(p, t, reduction="none")


CASES = [
    MetricCase(
        "uqi-mean-f32",
        UniversalImageQualityIndex,
        _batches(torch.float32),
        tmf.universal_image_quality_index,
        rtol=1e-5,
        atol=1e-6,
    ),
    MetricCase(
        "uqi-none-f64",
        functools.partial(UniversalImageQualityIndex, (5, 5), (1.0, 1.0), None),
        _batches(torch.float64),
        lambda p, t: tmf.universal_image_quality_index(p, t, (5, 5), (1.0, 1.0), None),
        rtol=1e-10,
        atol=1e-12,
    ),
    MetricCase(
        "rmse-sw-f64",
        functools.partial(RootMeanSquaredErrorUsingSlidingWindow, 6),
        _batches(torch.float64),
        lambda p, t: tmf.root_mean_squared_error_using_sliding_window(p, t, 6).float(),
        rtol=1e-6,
        atol=1e-7,
    ),
    MetricCase(
        "rase-f32",
        functools.partial(RelativeAverageSpectralError, 4),
        _batches(torch.float32),
        lambda p, t: tmf.relative_average_spectral_error(p, t, 4),
        rtol=1e-5,
        atol=1e-6,
    ),
    MetricCase(
        "rase-f64",
        RelativeAverageSpectralError,
        _batches(torch.float64),
        tmf.relative_average_spectral_error,
        rtol=1e-10,
        atol=1e-12,
    ),
    MetricCase(
        "scc-f64",
        functools.partial(SpatialCorrelationCoefficient, window_size=3),
        _batches(torch.float64),
        lambda p, t: tmf.spatial_correlation_coefficient(p, t, window_size=3),
        rtol=1e-5,
        atol=1e-6,
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_lifecycle(case):
    check_metric(case)


@pytest.mark.distributed
def test_distributed_uneven_shards_equal_one_process():
    run_distributed_cases(CASES)
