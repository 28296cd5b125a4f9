"""The image metrics never return a silently wrong number:

* NaN or infinity in an input is refused (ValueError naming the argument, the state unchanged)
  by PSNR, UQI, SAM, ERGAS and TotalVariation and their functional forms, where it used to poison
  the running sums for good; a non-finite result of finite inputs (a perfect prediction's
  infinite PSNR, a band of mean 0 in ERGAS) is still the metric's value;
* integer images whose total variation could pass int64 are refused (the differences wrapped:
  [2^62, -2^62, 2^62] gave 0); below that bound the value is exact;
* KID, MiFID and InceptionScore rows cut from extractors of different widths (merged, or synced
  from ranks given different ``feature`` modules) raise SyncError instead of re-cutting the rows.
"""

import pytest
import torch
from support.generative_image import Identity
from support.metric_tester import assert_rejects

import torchtally.functional.image as FI
import torchtally.image as I
from torchtally import SyncError

G = torch.Generator().manual_seed(0)
IMAGES = torch.rand(2, 3, 12, 12, generator=G)
TARGET = torch.rand(2, 3, 12, 12, generator=G) + 0.1

PAIR_METRICS = {
    "psnr": lambda: I.PeakSignalNoiseRatio(data_range=1.0),
    "psnr_range_from_target": lambda: I.PeakSignalNoiseRatio(data_range=None),
    "psnr_per_image": lambda: I.PeakSignalNoiseRatio(data_range=1.0, dim=(1, 2, 3), reduction="none"),
    "psnr_float64": lambda: I.PeakSignalNoiseRatio(data_range=1.0),
    "uqi": lambda: I.UniversalImageQualityIndex(kernel_size=(5, 5)),
    "sam": lambda: I.SpectralAngleMapper(),
    "ergas": lambda: I.ErrorRelativeGlobalDimensionlessSynthesis(),
}
PAIR_FUNCTIONS = {
    "psnr": lambda p, t: FI.peak_signal_noise_ratio(p, t, data_range=1.0),
    "psnr_per_image": lambda p, t: FI.peak_signal_noise_ratio(p, t, data_range=1.0, dim=(1, 2, 3)),
    "uqi": lambda p, t: FI.universal_image_quality_index(p, t, kernel_size=(5, 5)),
    "sam": FI.spectral_angle_mapper,
    "ergas": FI.error_relative_global_dimensionless_synthesis,
}


def spoiled(x: torch.Tensor, value: float) -> torch.Tensor:
    x = x.clone()
    x[1, 2, 3, 4] = value
    return x


@pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf")])
@pytest.mark.parametrize("argument", ["preds", "target"])
@pytest.mark.parametrize("name", sorted(PAIR_METRICS))
def test_non_finite_pixels_are_refused_with_the_state_kept(name, argument, value):
    metric = PAIR_METRICS[name]()
    dtype = torch.float64 if name.endswith("float64") else torch.float32
    preds, target = IMAGES.to(dtype), TARGET.to(dtype)
    metric.update(preds, target)  # some state to keep
    bad = (spoiled(preds, value), target) if argument == "preds" else (preds, spoiled(target, value))
    assert_rejects(metric, bad, ValueError, f"^{argument}: expected finite values")
    assert torch.isfinite(metric.compute()).all()


@pytest.mark.parametrize("argument", ["preds", "target"])
@pytest.mark.parametrize("name", sorted(PAIR_FUNCTIONS))
def test_functional_forms_refuse_non_finite_pixels(name, argument):
    bad = (spoiled(IMAGES, float("nan")), TARGET) if argument == "preds" else (IMAGES, spoiled(TARGET, float("nan")))
    with pytest.raises(ValueError, match=f"^{argument}: expected finite values"):
        PAIR_FUNCTIONS[name](*bad)


def test_total_variation_refuses_non_finite_pixels():
    metric = I.TotalVariation()
    metric.update(IMAGES)
    assert_rejects(metric, (spoiled(IMAGES, float("inf")),), ValueError, "^img: expected finite values")
    with pytest.raises(ValueError, match="^img: expected finite values"):
        FI.total_variation(spoiled(IMAGES, float("nan")))


def test_non_finite_values_of_finite_inputs_are_still_results():
    """The check is on the inputs: a perfect prediction has an infinite PSNR (torchmetrics too),
    a target band of mean 0 an infinite ERGAS."""
    psnr = I.PeakSignalNoiseRatio(data_range=1.0)
    psnr.update(IMAGES, IMAGES)
    assert psnr.compute() == float("inf")
    target = TARGET.clone()
    target[:, 0] = 0.0
    assert FI.error_relative_global_dimensionless_synthesis(IMAGES, target) == float("inf")


def test_total_variation_of_int64_images_never_wraps():
    column = torch.tensor([2**62, -(2**62), 2**62]).reshape(1, 1, 3, 1)
    metric = I.TotalVariation()
    assert_rejects(metric, (column,), ValueError, "^img: integer values .* past int64's range")
    # below the bound: exact (Python integers as the reference)
    big = torch.tensor([2**59, -(2**59), 2**59, 0]).reshape(1, 1, 4, 1)
    metric.update(big)
    want = abs(2**59 + 2**59) * 2 + 2**59
    assert int(FI.total_variation(big)) == want
    assert metric.compute().double() == float(want)


class Wide(Identity):
    """Features given directly as the "images", the first ``d`` columns of an [N, 8] batch."""

    def forward(self, x):
        return x[:, : self.num_features]


def _features(seed: int) -> torch.Tensor:
    return torch.rand(6, 8, generator=torch.Generator().manual_seed(seed))


@pytest.mark.parametrize(
    "make",
    [
        lambda d: I.KernelInceptionDistance(feature=Wide(d), subset_size=3),
        lambda d: I.MemorizationInformedFrechetInceptionDistance(feature=Wide(d)),
    ],
    ids=["KernelInceptionDistance", "MemorizationInformedFrechetInceptionDistance"],
)
def test_real_fake_rows_of_different_widths_raise(make):
    narrow, wide = make(4), make(6)
    for metric, seed in ((narrow, 0), (wide, 1)):
        metric.update(_features(seed), real=True)
        metric.update(_features(seed + 10), real=False)
    narrow.merge_state(wide)
    with pytest.raises(SyncError, match=r"different widths \(4 and 6 features\)"):
        narrow.compute()


def test_inception_score_rows_of_different_widths_raise():
    narrow, wide = I.InceptionScore(feature=Wide(4), splits=1), I.InceptionScore(feature=Wide(6), splits=1)
    narrow.update(_features(0))
    wide.update(_features(1))
    narrow.merge_state(wide)
    with pytest.raises(SyncError, match=r"different widths \(4 and 6 features\)"):
        narrow.compute()


def test_a_metric_that_saw_no_images_does_not_disagree():
    """The min-reduced width of a metric that saw nothing is a sentinel, not 0: merging it
    into one that did changes nothing."""
    seen, empty = I.InceptionScore(feature=Wide(4), splits=2), I.InceptionScore(feature=Wide(4), splits=2)
    seen.update(_features(0))
    torch.manual_seed(0)
    alone = seen.compute()
    seen.merge_state(empty)
    torch.manual_seed(0)
    torch.testing.assert_close(seen.compute(), alone)
