"""FrechetInceptionDistance and MiFID against torchmetrics with the same small random extractor
(uint8, float32 and float64 images), the Frechet distance against scipy.linalg.sqrtm,
reset_real_features=False, float64 sums against a float32 accumulation of the same sums on
large-mean features (ours within 1e-9 of one process over 2 and 3 gloo ranks, in at most 2
collectives), the missing-InceptionV3 errors, and bad input rejected with the state unchanged."""

import functools
import sys
import types

import pytest
import scipy.linalg
import torch
from support.generative_image import Identity, Net, fid_rank_worker
from support.metric_tester import (
    MetricCase,
    assert_rejects,
    assert_same,
    check_metric,
    made_in_float64,
    run_distributed_cases,
)
from support.rank_pools import run_on_ranks
from torch import nn
from torchmetrics.image.fid import FrechetInceptionDistance as TMFID
from torchmetrics.image.mifid import MemorizationInformedFrechetInceptionDistance as TMMiFID

from torchtally.functional.image.generative_scores import frechet_distance, gaussian_from_sums
from torchtally.image import FrechetInceptionDistance, MemorizationInformedFrechetInceptionDistance

NET = Net()
SIZE = (3, 32, 32)


def _images(seed, n, dtype):
    g = torch.Generator().manual_seed(seed)
    if dtype == torch.uint8:
        return torch.randint(0, 256, (n, *SIZE), generator=g, dtype=torch.uint8)
    return torch.rand(n, *SIZE, generator=g).to(dtype)


def _batches(seed, dtype, count=6):
    return [(_images(seed + i, 2 + i % 3, dtype), i % 2 == 0) for i in range(count)]


def _large_mean(seed, n, d=8, shift=0.0):
    g = torch.Generator().manual_seed(seed)
    return 100.0 + shift + torch.randn(n, d, generator=g, dtype=torch.float64) * (1 + shift)


LARGE = [(_large_mean(40 + i, 30 + 7 * i, shift=0.0 if i % 2 == 0 else 0.5), i % 2 == 0) for i in range(6)]


def _torchmetrics(cls, batches, **kwargs):
    m = cls(**kwargs)
    for imgs, real in batches:
        m.update(imgs, real)
    return m.compute()


def _fid_ref(batches):
    return _torchmetrics(TMFID, batches, feature=NET, input_img_size=SIZE)


CASES = [
    MetricCase(
        "fid_uint8",
        functools.partial(FrechetInceptionDistance, feature=NET, input_img_size=SIZE),
        batches=_batches(0, torch.uint8),
        reference=_fid_ref,
        reference_on_batches=True,
        rtol=1e-5,
        atol=1e-6,
    ),
    MetricCase(
        "fid_large_mean_float64",
        functools.partial(made_in_float64, FrechetInceptionDistance, feature=Identity(8)),
        batches=LARGE,
        reference=lambda b: _torchmetrics(TMFID, b, feature=Identity(8)),
        reference_on_batches=True,
        rtol=1e-9,
        atol=0.0,
    ),
    MetricCase(
        "mifid_float32",
        functools.partial(MemorizationInformedFrechetInceptionDistance, feature=NET, cosine_distance_eps=0.9),
        batches=_batches(20, torch.float32),
        reference=lambda b: _torchmetrics(TMMiFID, b, feature=NET, cosine_distance_eps=0.9),
        reference_on_batches=True,
        rtol=1e-5,
        atol=1e-6,
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_lifecycle(case):
    check_metric(case)


@pytest.mark.distributed
def test_distributed_three_ranks():
    run_distributed_cases(CASES, world_size=3)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_float_images_and_normalize_against_torchmetrics(dtype):
    batches = _batches(30, dtype, count=4)
    for cls, ref in ((FrechetInceptionDistance, TMFID), (MemorizationInformedFrechetInceptionDistance, TMMiFID)):
        kw = dict(feature=NET, normalize=True)
        if cls is FrechetInceptionDistance:
            kw["input_img_size"] = SIZE
        got = _torchmetrics(cls, batches, **kw)
        assert got.dtype == torch.float32
        assert_same(got, _torchmetrics(ref, batches, **kw), rtol=1e-5, atol=1e-6)


def test_frechet_distance_against_scipy_sqrtm():
    g = torch.Generator().manual_seed(1)
    a, b = torch.randn(40, 6, generator=g, dtype=torch.float64), torch.randn(50, 6, generator=g, dtype=torch.float64)
    b = b @ torch.randn(6, 6, generator=g, dtype=torch.float64) + 0.3
    mu1, s1 = gaussian_from_sums(a.sum(0), a.T @ a, torch.tensor(40))
    mu2, s2 = gaussian_from_sums(b.sum(0), b.T @ b, torch.tensor(50))
    assert_same(s1, torch.cov(a.T), rtol=1e-12, atol=1e-13)
    root = scipy.linalg.sqrtm(s1.numpy() @ s2.numpy()).real
    expected = ((mu1 - mu2) ** 2).sum().item() + s1.trace().item() + s2.trace().item() - 2 * root.trace()
    assert_same(frechet_distance(mu1, s1, mu2, s2), expected, rtol=1e-10)


def test_reset_real_features_false_keeps_the_real_side():
    real, fake1, fake2 = _images(50, 6, torch.uint8), _images(51, 5, torch.uint8), _images(52, 7, torch.uint8)
    for cls, ref in ((FrechetInceptionDistance, TMFID), (MemorizationInformedFrechetInceptionDistance, TMMiFID)):
        kw = dict(feature=NET, reset_real_features=False)
        if cls is FrechetInceptionDistance:
            kw["input_img_size"] = SIZE
        ours, theirs = cls(**kw), ref(**kw)
        for m in (ours, theirs):
            m.update(real, real=True)
            m.update(fake1, real=False)
            m.reset()
            m.update(fake2, real=False)
        assert_same(ours.compute(), theirs.compute(), rtol=1e-5, atol=1e-6)
    m = FrechetInceptionDistance(feature=NET, input_img_size=SIZE)  # the default resets both sides
    m.update(real, real=True)
    m.reset()
    assert int(m.real_features_num_samples) == 0


def _float32_sums_fid(batches):
    """The same sums accumulated in float32 (what a float32 state would hold)."""
    sums = {s: [torch.zeros(8), torch.zeros(8, 8), 0] for s in (True, False)}
    for x, real in batches:
        x32 = x.float()
        acc = sums[real]
        acc[0] += x32.sum(0)
        acc[1] += x32.T @ x32
        acc[2] += x32.shape[0]
    (a, aa, n), (b, bb, k) = sums[True], sums[False]
    mu1, s1 = gaussian_from_sums(a.double(), aa.double(), torch.tensor(n))
    mu2, s2 = gaussian_from_sums(b.double(), bb.double(), torch.tensor(k))
    return frechet_distance(mu1, s1, mu2, s2)


def _two_pass_reference(batches):
    real = torch.cat([x for x, r in batches if r])
    fake = torch.cat([x for x, r in batches if not r])
    return frechet_distance(real.mean(0), torch.cov(real.T), fake.mean(0), torch.cov(fake.T))


@pytest.mark.distributed
def test_float64_sums_exact_where_float32_sums_drift():
    reference = _two_pass_reference(LARGE)
    drift = abs(_float32_sums_fid(LARGE) - reference) / reference
    assert drift > 1e-5, drift  # float32 sums lose the covariance under a mean of 100
    ours = made_in_float64(FrechetInceptionDistance, feature=Identity(8))
    for x, real in LARGE:
        ours.update(x, real)
    assert_same(ours.compute(), reference, rtol=1e-9)
    for collectives, result in run_on_ranks(fid_rank_worker, 2, LARGE):
        assert sum(collectives.values()) == 1, collectives  # D = 8: the data rides in the header
        assert_same(result, reference, rtol=1e-9)


@pytest.mark.distributed
def test_a_wide_state_syncs_in_one_all_reduce_after_the_header():
    """At D = 48 the state (2 (D^2 + D + 1) float64) is too big for the header: one all_reduce
    carries all of it, counts included."""
    gen = torch.Generator().manual_seed(3)
    batches = [
        (torch.randn(n, 48, generator=gen, dtype=torch.float64), bool(i % 2)) for i, n in enumerate([60, 70, 50, 80])
    ]
    reference = _two_pass_reference(batches)
    for world_size in (2, 3):
        for collectives, result in run_on_ranks(fid_rank_worker, world_size, batches):
            data = {name: n for name, n in collectives.items() if name in ("all_reduce", "reduce")}
            assert data == {"all_reduce": 1}, collectives
            assert sum(collectives.values()) <= 2, collectives  # and the header exchange
            assert_same(result, reference, rtol=1e-9)


def test_no_inception_without_torch_fidelity_or_weights(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "torch_fidelity", None)  # not importable, as here
    with pytest.raises(ModuleNotFoundError, match="pass an nn.Module as `feature`"):
        FrechetInceptionDistance(feature=2048)
    with pytest.raises(ModuleNotFoundError, match="torch-fidelity"):
        MemorizationInformedFrechetInceptionDistance(feature=64)
    fake = types.ModuleType("torch_fidelity.feature_extractor_inceptionv3")
    fake.FeatureExtractorInceptionV3 = _FakeInception
    monkeypatch.setitem(sys.modules, "torch_fidelity", types.ModuleType("torch_fidelity"))
    monkeypatch.setitem(sys.modules, "torch_fidelity.feature_extractor_inceptionv3", fake)
    monkeypatch.setenv("TORCH_HOME", str(tmp_path))
    with pytest.raises(FileNotFoundError, match="feature_extractor_weights_path"):
        FrechetInceptionDistance(feature=64, feature_extractor_weights_path=str(tmp_path / "missing.pth"))
    with pytest.raises(FileNotFoundError, match="torch hub's cache"):
        FrechetInceptionDistance(feature=64)
    with pytest.raises(ValueError, match="must be one of"):
        FrechetInceptionDistance(feature=100)
    weights = tmp_path / "w.pth"
    weights.write_bytes(b"")
    m = FrechetInceptionDistance(feature=64, feature_extractor_weights_path=str(weights))
    imgs = _images(60, 3, torch.uint8)
    x = torch.nn.functional.interpolate(imgs.float(), size=(299, 299), mode="bilinear", antialias=True)
    expected = m.inception.net.Conv2d_1a_3x3((x - 128) / 128).mean(dim=(2, 3))
    assert_same(m.inception(imgs), expected, rtol=1e-6, atol=1e-6)
    with pytest.raises(TypeError, match="uint8"):
        m.inception(imgs.float())


class _FakeInception(nn.Module):
    """torch-fidelity's class as far as the extractor uses it: named blocks (identity but the first)."""

    def __init__(self, name, features_list, weights_path=None):
        super().__init__()
        self.Conv2d_1a_3x3 = nn.Conv2d(3, 64, 1)
        for block in ("Conv2d_2a_3x3", "Conv2d_2b_3x3", "MaxPool_1"):
            setattr(self, block, nn.Identity())


def test_bad_input_raises_with_the_state_unchanged():
    m = FrechetInceptionDistance(feature=NET, input_img_size=SIZE)
    m.update(_images(70, 3, torch.uint8), True)
    nan = _images(71, 2, torch.float32)
    nan[0, 0, 0, 0] = float("nan")
    assert_rejects(m, (nan, True), ValueError, "finite")
    assert_rejects(m, (_images(72, 2, torch.uint8), "yes"), TypeError, "real")
    assert_rejects(m, ([1, 2], True), TypeError, "imgs")
    m = FrechetInceptionDistance(feature=Identity(8))
    m.update(torch.randn(3, 8), False)
    assert_rejects(m, (torch.randn(3, 7), False), ValueError, "8 values")
    assert_rejects(m, (torch.randn(3, 8).long(), False), TypeError, "floating")
    mifid = MemorizationInformedFrechetInceptionDistance(feature=Identity(8))
    mifid.update(torch.randn(3, 5), True)
    assert_rejects(mifid, (torch.randn(3, 6), False), ValueError, "5 values")
    for bad in (dict(normalize=1), dict(reset_real_features="no")):
        with pytest.raises(ValueError, match="bool"):
            FrechetInceptionDistance(feature=NET, input_img_size=SIZE, **bad)
    with pytest.raises(TypeError, match="feature"):
        FrechetInceptionDistance(feature=2.5)
    with pytest.raises(ValueError, match="cosine_distance_eps"):
        MemorizationInformedFrechetInceptionDistance(feature=NET, cosine_distance_eps=1.5)
