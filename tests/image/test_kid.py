"""KernelInceptionDistance and InceptionScore against torchmetrics with the same small random
extractor and the same torch.manual_seed (so the same random subsets and splits; uint8,
float32 and float64 images), a fixed-subset MMD^2 and Inception Score computed directly,
reset_real_features=False, 3 gloo ranks == one process (compute seeded), the missing-InceptionV3
error, and bad input rejected with the state unchanged."""

import functools
import sys

import pytest
import torch
from support.generative_image import Identity, Net, SeededIS, SeededKID
from support.metric_tester import MetricCase, assert_rejects, assert_same, check_metric, run_distributed_cases
from torchmetrics.image.inception import InceptionScore as TMInceptionScore
from torchmetrics.image.kid import KernelInceptionDistance as TMKID

from torchtally.image import InceptionScore, KernelInceptionDistance

NET = Net(d=16, seed=1)
LOGITS_NET = Net(d=10, seed=2)
SIZE = (3, 32, 32)


def _images(seed, n, dtype):
    g = torch.Generator().manual_seed(seed)
    if dtype == torch.uint8:
        return torch.randint(0, 256, (n, *SIZE), generator=g, dtype=torch.uint8)
    return torch.rand(n, *SIZE, generator=g).to(dtype)


def _seeded(metric, batches):
    for batch in batches:
        metric.update(*batch)
    torch.manual_seed(0)
    return metric.compute()


KID_KW = dict(feature=NET, subsets=4, subset_size=3)
KID_BATCHES = [(_images(i, 3 + i % 2, torch.uint8), i % 2 == 0) for i in range(8)]
IS_BATCHES = [(_images(20 + i, 2 + i % 3, torch.float32),) for i in range(6)]

CASES = [
    MetricCase(
        "kid_uint8",
        functools.partial(SeededKID, **KID_KW),
        batches=KID_BATCHES,
        reference=lambda b: _seeded(TMKID(**KID_KW), b),
        reference_on_batches=True,
        rtol=1e-4,
        atol=1e-6,
    ),
    MetricCase(
        "inception_score_float32",
        functools.partial(SeededIS, feature=LOGITS_NET, splits=3),
        batches=IS_BATCHES,
        reference=lambda b: _seeded(TMInceptionScore(feature=LOGITS_NET, splits=3), b),
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
def test_float_images_same_seed_as_torchmetrics(dtype):
    real, fake = _images(40, 12, dtype), _images(41, 10, dtype) * 0.7
    for normalize in (False, True):
        got = []
        for cls in (KernelInceptionDistance, TMKID):
            m = cls(feature=NET, subsets=5, subset_size=6, degree=2, gamma=0.5, coef=0.5, normalize=normalize)
            got.append(_seeded(m, [(real, True), (fake, False)]))
        assert_same(got[0], got[1], rtol=1e-4, atol=1e-6)
        got = [
            _seeded(cls(feature=LOGITS_NET, splits=4, normalize=normalize), [(real,)])
            for cls in (InceptionScore, TMInceptionScore)
        ]
        assert got[0][0].dtype == torch.float32
        assert_same(got[0], got[1], rtol=1e-5, atol=1e-6)


def test_fixed_subsets_and_splits_against_a_direct_formula():
    """subset_size = every image: the MMD^2 is that of the whole sets, whatever the draw; one
    split: the score over every image."""
    g = torch.Generator().manual_seed(3)
    x, y = (
        torch.randn(7, 5, generator=g, dtype=torch.float64),
        torch.randn(7, 5, generator=g, dtype=torch.float64) + 0.4,
    )

    def k(a, b):
        return (a @ b.T / 5 + 1) ** 3

    m = x.shape[0]
    expected = (k(x, x).sum() - k(x, x).trace() + k(y, y).sum() - k(y, y).trace()) / (m * (m - 1)) - 2 * k(x, y).mean()
    kid = KernelInceptionDistance(feature=Identity(5), subsets=3, subset_size=7).update(x, True).update(y, False)
    mean, std = kid.compute()
    assert_same(mean, expected, rtol=1e-5)
    assert_same(std, 0.0, atol=1e-7)
    p = x.float().double().softmax(dim=1)
    expected_is = (p * (p.log() - p.mean(0).log())).sum(1).mean().exp()
    score, spread = InceptionScore(feature=Identity(5), splits=1).update(x).compute()
    assert_same(score, expected_is, rtol=1e-6)
    assert torch.isnan(spread)  # the sample std of one split, as torchmetrics


def test_reset_real_features_false_keeps_the_real_side():
    real, fake1, fake2 = _images(50, 6, torch.uint8), _images(51, 5, torch.uint8), _images(52, 7, torch.uint8)
    kw = dict(feature=NET, subsets=3, subset_size=4, reset_real_features=False)
    ours, theirs = KernelInceptionDistance(**kw), TMKID(**kw)
    for m in (ours, theirs):
        m.update(real, real=True)
        m.update(fake1, real=False)
        m.reset()
        m.update(fake2, real=False)
    torch.manual_seed(1)
    got = ours.compute()
    torch.manual_seed(1)
    assert_same(got, theirs.compute(), rtol=1e-4, atol=1e-6)
    kid = KernelInceptionDistance(**{**kw, "reset_real_features": True}).update(real, True)
    kid.reset()
    assert kid.real_features.numel() == 0


def test_no_inception_without_torch_fidelity(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch_fidelity", None)
    with pytest.raises(ModuleNotFoundError, match="pass an nn.Module as `feature`"):
        KernelInceptionDistance()
    with pytest.raises(ModuleNotFoundError, match="pass an nn.Module as `feature`"):
        InceptionScore()


def test_bad_input_raises_with_the_state_unchanged():
    kid = KernelInceptionDistance(feature=NET, subset_size=2).update(_images(60, 3, torch.uint8), True)
    nan = _images(61, 2, torch.float32)
    nan[1, 2, 3, 4] = float("inf")
    assert_rejects(kid, (nan, False), ValueError, "finite")
    assert_rejects(kid, (_images(62, 2, torch.uint8), 1), TypeError, "real")
    iscore = InceptionScore(feature=Identity(4)).update(torch.randn(3, 4))
    assert_rejects(iscore, (torch.randn(3, 5),), ValueError, "4 values")
    assert_rejects(iscore, (torch.randn(3, 4, 2),), ValueError, r"\[N, D\]")
    with pytest.raises(ValueError, match="subset_size"):
        KernelInceptionDistance(feature=NET, subset_size=5).update(_images(63, 3, torch.uint8), True).update(
            _images(64, 6, torch.uint8), False
        ).compute()
    for bad in (dict(subsets=0), dict(degree=1.5), dict(gamma=-1.0), dict(coef=1), dict(normalize=None)):
        with pytest.raises(ValueError, match=next(iter(bad))):
            KernelInceptionDistance(feature=NET, **bad)
    with pytest.raises(ValueError, match="splits"):
        InceptionScore(feature=NET, splits=0)
    with pytest.raises(ValueError, match="must be one of"):
        InceptionScore(feature="logits")


def test_rows_from_an_extractor_that_refills_one_buffer_are_kept_as_they_were():
    class Refilling(torch.nn.Module):
        """Hands back the same output tensor every call, refilled (as a forward hook's capture can)."""

        def __init__(self):
            super().__init__()
            self.out = torch.zeros(4, 3)

        def forward(self, imgs):
            self.out.copy_(imgs.flatten(1)[:, :3].float())
            return self.out

    from torchtally.image import MemorizationInformedFrechetInceptionDistance

    for cls in (KernelInceptionDistance, MemorizationInformedFrechetInceptionDistance):
        metric = cls(feature=Refilling())
        first, second = torch.rand(4, 3, 2, 2), torch.rand(4, 3, 2, 2)
        metric.update(first, real=True)
        metric.update(second, real=True)
        real, _ = metric.rows()
        assert torch.equal(real, torch.cat([first.flatten(1)[:, :3], second.flatten(1)[:, :3]]))
    iscore = InceptionScore(feature=Refilling())
    first, second = torch.rand(4, 3, 2, 2), torch.rand(4, 3, 2, 2)
    iscore.update(first).update(second)
    assert torch.equal(iscore.features, torch.cat([first.flatten(1)[:, :3], second.flatten(1)[:, :3]]).reshape(-1))


def test_the_extractor_runs_without_gradient_and_rows_beyond_float32_are_refused():
    from torchtally.image import MemorizationInformedFrechetInceptionDistance

    class Wide(torch.nn.Module):
        """float64 features whose first value is the image's first pixel times 1e40 when asked."""

        def __init__(self):
            super().__init__()
            self.scale = 1.0
            self.grad_seen = []

        def forward(self, imgs):
            self.grad_seen.append(torch.is_grad_enabled())
            if self.scale == 0.0:
                raise RuntimeError("refused")
            rows = imgs.flatten(1)[:, :3].double()
            rows[:, 0] *= self.scale
            return rows

    for make in (
        lambda net: KernelInceptionDistance(feature=net, subset_size=2),
        lambda net: MemorizationInformedFrechetInceptionDistance(feature=net),
        lambda net: InceptionScore(feature=net),
    ):
        net = Wide()
        metric = make(net)
        args = (lambda imgs: (imgs,)) if isinstance(metric, InceptionScore) else (lambda imgs: (imgs, True))
        metric.update(*args(torch.rand(4, 3, 2, 2) + 0.5))
        net.scale = 1e40  # finite in float64, infinite in float32: the float32 state cannot hold it
        beyond = args(torch.rand(4, 3, 2, 2) + 0.5)
        assert_rejects(metric, beyond, ValueError, "finite values .*float32.* at \\[0, 0\\]")
        net.scale = 0.0
        assert_rejects(metric, args(torch.rand(4, 3, 2, 2)), ValueError, "could not read the batch")
        assert torch.is_grad_enabled()  # restored after the extractor raised
        assert net.grad_seen == [False] * 3
