"""LPIPS, DISTS and the perceptual path length against torchmetrics, fed the same small randomly
initialised backbones (torchmetrics' torchvision loader patched to return them; its bundled LPIPS
linear layers and DISTS weights read from its package) and against float64 computations written
here; bad input raises with the state unchanged; nothing is downloaded; LPIPS on 3 gloo ranks
with uneven shards == one process."""

import copy
import functools
import importlib
import os
import types
from unittest import mock

import pytest
import torch
import torchmetrics.functional.image.dists as tm_dists
import torchmetrics.functional.image.lpips as tm_lpips
from support.metric_tester import MetricCase, assert_rejects, assert_same, check_metric, run_distributed_cases
from torch import nn

from torchtally.functional.image import (
    deep_image_structure_and_texture_similarity,
    learned_perceptual_image_patch_similarity,
    perceptual_path_length,
)
from torchtally.image import (
    DeepImageStructureAndTextureSimilarity,
    LearnedPerceptualImagePatchSimilarity,
    PerceptualPathLength,
)

LPIPS = LearnedPerceptualImagePatchSimilarity
_TM_DIR = os.path.dirname(tm_lpips.__file__)
ALEX_WEIGHTS = os.path.join(_TM_DIR, "lpips_models", "alex.pth")
DISTS_WEIGHTS = os.path.join(_TM_DIR, "dists_models", "weights.pt")
# the package exports a function of the same name: the module itself
tm_ppl = importlib.import_module("torchmetrics.functional.image.perceptual_path_length")


def _alex_like() -> nn.Sequential:
    """torchvision AlexNet's ``features`` layout (taps after layers 1, 4, 7, 9, 11; channels 64,
    192, 384, 256, 256), small kernels, random weights."""
    torch.manual_seed(0)
    conv = functools.partial(nn.Conv2d, kernel_size=3, padding=1)
    return nn.Sequential(
        conv(3, 64, stride=2), nn.ReLU(), nn.MaxPool2d(2),
        conv(64, 192), nn.ReLU(), nn.MaxPool2d(2),
        conv(192, 384), nn.ReLU(),
        conv(384, 256), nn.ReLU(),
        conv(256, 256), nn.ReLU(), nn.MaxPool2d(2),
    ).requires_grad_(False)  # fmt: skip


ALEX = _alex_like()


def _images(seed, n=2, dtype=torch.float32, low=-1.0, size=16):
    g = torch.Generator().manual_seed(seed)
    a, b = torch.rand(n, 3, size, size, generator=g), torch.rand(n, 3, size, size, generator=g)
    return (a * (1 - low) + low).to(dtype), (b * (1 - low) + low).to(dtype)


def _tm_lpips_fn(img1, img2, reduction="mean", normalize=False, features=ALEX):
    """torchmetrics' functional LPIPS with ``features`` (a copy: it casts its network) as backbone."""
    with mock.patch.object(tm_lpips, "_get_tv_model_features", lambda *a, **k: copy.deepcopy(features)):
        return tm_lpips.learned_perceptual_image_patch_similarity(img1, img2, "alex", reduction, normalize)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_lpips_against_torchmetrics(dtype):
    img1, img2 = _images(0, 3, dtype)
    features = copy.deepcopy(ALEX).to(dtype)
    tol = 1e-5 if dtype == torch.float32 else 1e-8
    expected = _tm_lpips_fn(img1, img2, "none", features=features)
    for reduction, want in (("mean", expected.mean()), ("sum", expected.sum()), ("none", expected)):
        got = learned_perceptual_image_patch_similarity(
            img1, img2, "alex", reduction, net=features, weights=ALEX_WEIGHTS
        )
        assert got.dtype == dtype
        assert_same(got, want, rtol=tol)
    unit1, unit2 = (img1 + 1) / 2, (img2 + 1) / 2
    got = learned_perceptual_image_patch_similarity(unit1, unit2, normalize=True, net=features, weights=ALEX_WEIGHTS)
    assert_same(got, _tm_lpips_fn(unit1, unit2, normalize=True, features=features), rtol=tol)
    one = learned_perceptual_image_patch_similarity(
        img1[:1], img2[:1], reduction=None, net=features, weights=ALEX_WEIGHTS
    )
    assert one.shape == ()  # torchmetrics squeezes a single pair to 0-d
    m = LPIPS("alex", "none", net=features, weights=ALEX_WEIGHTS).update(img1[:2], img2[:2]).update(img1[2:], img2[2:])
    assert m.compute().dtype == torch.float32
    assert_same(m.compute().double(), expected.double(), rtol=1e-6)


class _TwoMaps(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(1)
        self.a, self.b = nn.Conv2d(3, 6, 3, stride=2), nn.Conv2d(6, 5, 3)

    def forward(self, x):
        h = torch.tanh(self.a(x))
        return (h, self.b(h))


def test_lpips_own_backbone_against_float64_formula():
    net = _TwoMaps().double().requires_grad_(False)
    weights = [torch.rand(6, dtype=torch.float64), torch.rand(5, dtype=torch.float64)]
    img1, img2 = _images(1, 3, torch.float64)

    def exact(x, y):
        shift = torch.tensor([-0.030, -0.088, -0.188], dtype=torch.float64).view(1, 3, 1, 1)
        scale = torch.tensor([0.458, 0.448, 0.450], dtype=torch.float64).view(1, 3, 1, 1)
        total = 0
        for fx, fy, w in zip(net((x - shift) / scale), net((y - shift) / scale), weights):
            nx = fx / torch.sqrt(1e-8 + (fx**2).sum(1, keepdim=True))
            ny = fy / torch.sqrt(1e-8 + (fy**2).sum(1, keepdim=True))
            total = total + torch.nn.functional.conv2d((nx - ny) ** 2, w.view(1, -1, 1, 1)).mean((1, 2, 3))
        return total

    got = learned_perceptual_image_patch_similarity(img1, img2, reduction="none", net=net, weights=weights)
    assert_same(got, exact(img1, img2), rtol=1e-12)
    # float16 images are cast to the network's dtype
    low1, low2 = img1.half(), img2.half()
    got = learned_perceptual_image_patch_similarity(low1, low2, reduction="sum", net=net, weights=weights)
    assert got.dtype == torch.float16
    assert_same(got.double(), exact(low1.double(), low2.double()).sum(), rtol=1e-3)
    # the same linear layers as an LPIPS state dict
    sd = {f"lin{k}.model.1.weight": w.view(1, -1, 1, 1) for k, w in enumerate(weights)}
    assert_same(learned_perceptual_image_patch_similarity(img1, img2, net=net, weights=sd), exact(img1, img2).mean())


def test_lpips_gradient_reaches_the_images():
    img1, img2 = _images(2)
    img1.requires_grad_(True)
    learned_perceptual_image_patch_similarity(img1, img2, net=ALEX, weights=ALEX_WEIGHTS).backward()
    assert img1.grad is not None and bool(img1.grad.abs().sum() > 0)


def test_lpips_without_a_network_or_with_bad_input_raises():
    with pytest.raises(ValueError, match="never downloads.*net="):
        LPIPS()
    with pytest.raises(ValueError, match="weights"):
        LPIPS(net=ALEX)
    with pytest.raises(ValueError, match="not a local file"):
        LPIPS(net=ALEX, weights="/nonexistent/alex.pth")
    with pytest.raises(ValueError, match="net_type"):
        LPIPS("resnet", net=ALEX, weights=ALEX_WEIGHTS)
    with pytest.raises(ValueError, match="reduction"):
        LPIPS(reduction="max", net=ALEX, weights=ALEX_WEIGHTS)
    with pytest.raises(ValueError, match="at least 12 layers"):
        LPIPS(net=ALEX[:8], weights=ALEX_WEIGHTS)
    img1, img2 = _images(3)
    m = LPIPS(net=ALEX, weights=ALEX_WEIGHTS).update(img1, img2)
    assert_rejects(m, (img1[:, :2], img2[:, :2]), ValueError, r"img1: expected images of shape \[N, 3, H, W\]")
    assert_rejects(m, (img1, img2[:1]), ValueError, "img2: expected the shape of img1")
    assert_rejects(m, (img1.long(), img2), TypeError, "img1: expected floating-point")
    assert_rejects(m, (img1, img2 - 1.5), ValueError, "img2: expected values in >= -1")
    nan = img1.clone()
    nan[0, 0, 0, 0] = float("nan")
    assert_rejects(m, (nan, img2), ValueError, "img1: expected finite")
    unit = LPIPS(normalize=True, net=ALEX, weights=ALEX_WEIGHTS)
    assert_rejects(unit, (img1, img2), ValueError, r"img1: expected values in \[0.0, 1.0\]")
    wrong = LPIPS(net=ALEX, weights=[torch.ones(64), torch.ones(192), torch.ones(384), torch.ones(256)])
    assert_rejects(wrong, (img1, img2), ValueError, "5 feature maps.*4 linear layers")


def _vgg_like() -> nn.Sequential:
    """torchvision VGG16's ``features`` layout (30 layers, max pooling at 4, 9, 16, 23, taps after
    3, 8, 15, 22, 29 with 64, 128, 256, 512, 512 channels), one random convolution per stage."""
    torch.manual_seed(2)
    layers = [nn.Identity() for _ in range(30)]
    for i, (c_in, c_out) in zip((0, 5, 10, 17, 24), ((3, 64), (64, 128), (128, 256), (256, 512), (512, 512))):
        layers[i], layers[i + 1] = nn.Conv2d(c_in, c_out, 3, padding=1), nn.ReLU()
    for i in (4, 9, 16, 23):
        layers[i] = nn.MaxPool2d(2)
    return nn.Sequential(*layers).requires_grad_(False)


VGG = _vgg_like()


def _tm_dists_fn(preds, target, reduction=None):
    """torchmetrics' functional DISTS with VGG (a copy) as its VGG16 ``features``."""
    vgg16 = lambda weights=None: types.SimpleNamespace(features=copy.deepcopy(VGG))  # noqa: E731
    with (
        mock.patch.object(tm_dists, "_TORCHVISION_AVAILABLE", True),
        mock.patch.object(tm_dists, "vgg16", vgg16, create=True),
        mock.patch.object(tm_dists, "VGG16_Weights", types.SimpleNamespace(DEFAULT=None), create=True),
    ):
        return tm_dists.deep_image_structure_and_texture_similarity(preds, target, reduction).detach()


def test_dists_against_torchmetrics_and_float64():
    preds, target = _images(4, 2, low=0.0, size=24)
    expected = _tm_dists_fn(preds, target)
    for reduction, want in ((None, expected), ("mean", expected.mean()), ("sum", expected.sum())):
        got = deep_image_structure_and_texture_similarity(preds, target, reduction, net=VGG, weights=DISTS_WEIGHTS)
        assert_same(got, want, rtol=1e-5)
    m = DeepImageStructureAndTextureSimilarity(net=VGG, weights=DISTS_WEIGHTS)
    m.update(preds[:1], target[:1]).update(preds[1:], target[1:])
    assert m.compute().dtype == torch.float32
    assert_same(m.compute(), expected.mean(), rtol=1e-5)
    # float64 (torchmetrics takes float32 only): a float64 network, against float32 within its precision
    vgg64 = copy.deepcopy(VGG).double()
    got = deep_image_structure_and_texture_similarity(preds.double(), target.double(), net=vgg64, weights=DISTS_WEIGHTS)
    assert got.dtype == torch.float64
    assert_same(got, expected.double(), rtol=1e-5)
    one = deep_image_structure_and_texture_similarity(preds[:1], target[:1], net=VGG, weights=DISTS_WEIGHTS)
    assert one.shape == ()
    with pytest.raises(ValueError, match="never downloads"):
        DeepImageStructureAndTextureSimilarity()
    with pytest.raises(ValueError, match="reduction"):
        DeepImageStructureAndTextureSimilarity(reduction="none", net=VGG, weights=DISTS_WEIGHTS)
    with pytest.raises(ValueError, match="'alpha' and 'beta'"):
        DeepImageStructureAndTextureSimilarity(net=VGG, weights=ALEX_WEIGHTS)
    assert_rejects(m, (preds, target[:1]), ValueError, "target: expected the shape of preds")
    assert_rejects(m, (preds.int(), target), TypeError, "preds: expected floating-point")
    few = DeepImageStructureAndTextureSimilarity(net=VGG, weights={"alpha": torch.ones(9), "beta": torch.ones(9)})
    assert_rejects(few, (preds, target), ValueError, "1475 in all.*9 alpha")


class _Generator(nn.Module):
    """Latents of 4, images [n, 3, 20, 20] in [0, 255]; with labels when ``num_classes``."""

    def __init__(self, num_classes=None):
        super().__init__()
        torch.manual_seed(3)
        self.layer = nn.Linear(4, 3 * 20 * 20)
        if num_classes is not None:
            self.num_classes = num_classes
            self.embed = nn.Embedding(num_classes, 4)

    def forward(self, z, labels=None):
        if labels is not None:
            z = z + self.embed(labels)
        return 255 * torch.sigmoid(self.layer(z)).reshape(-1, 3, 20, 20)

    def sample(self, num_samples):
        return torch.randn(num_samples, 4)


class _MeanSquare(nn.Module):
    def forward(self, a, b):
        return ((a - b) ** 2).mean((1, 2, 3))


class _Difference(nn.Module):  # not one distance per pair
    def forward(self, a, b):
        return a - b


def _tm_ppl(seed, **kwargs):
    torch.manual_seed(seed)
    patched = lambda *a, **k: copy.deepcopy(ALEX)  # noqa: E731
    with (
        mock.patch.object(tm_ppl, "_TORCHVISION_AVAILABLE", True),
        mock.patch.object(tm_lpips, "_get_tv_model_features", patched),
    ):
        return tm_ppl.perceptual_path_length(**kwargs)


@pytest.mark.parametrize(
    "options",
    [
        dict(interpolation_method="lerp", sim_net=_MeanSquare()),
        dict(interpolation_method="slerp_any", sim_net=_MeanSquare(), conditional=True, lower_discard=None),
        dict(interpolation_method="slerp_unit", sim_net="alex", resize=12, upper_discard=None),
    ],
    ids=["lerp", "slerp_any-conditional", "slerp_unit-lpips-resize"],
)
def test_ppl_against_torchmetrics_under_one_seed(options):
    generator = _Generator(num_classes=3 if options.get("conditional") else None).requires_grad_(False)
    kwargs = dict(generator=generator, num_samples=9, batch_size=4, epsilon=0.05, **options)
    expected = _tm_ppl(7, **kwargs)
    torch.manual_seed(7)
    own = dict(net=ALEX, weights=ALEX_WEIGHTS) if options["sim_net"] == "alex" else {}
    got = perceptual_path_length(**kwargs, **own)
    for g, e in zip(got, expected):
        assert g.dtype == torch.float32
        assert_same(g, e, rtol=1e-4, atol=1e-6)
    class_options = {k: v for k, v in kwargs.items() if k != "generator"}
    metric = PerceptualPathLength(**class_options, **own).update(generator)
    torch.manual_seed(7)
    for g, e in zip(metric.compute(), got):
        assert_same(g, e)


def test_ppl_options_and_generator_checks():
    with pytest.raises(ValueError, match="never downloads"):
        PerceptualPathLength(sim_net="vgg")
    with pytest.raises(ValueError, match="sim_net"):
        PerceptualPathLength(sim_net="resnet")
    for bad in (dict(num_samples=0), dict(epsilon=1), dict(interpolation_method="cubic"), dict(lower_discard=1.5)):
        with pytest.raises(ValueError, match=next(iter(bad))):
            PerceptualPathLength(sim_net=_MeanSquare(), **bad)
    metric = PerceptualPathLength(sim_net=_MeanSquare(), conditional=True)
    with pytest.raises(NotImplementedError, match="sample"):
        metric.update(nn.Linear(2, 2))
    with pytest.raises(AttributeError, match="num_classes"):
        metric.update(_Generator())
    with pytest.raises(ValueError, match="one distance per pair"):
        perceptual_path_length(_Generator(), num_samples=4, sim_net=_Difference())


def _lpips_batches(seed, count):
    return [_images(seed + i, n=1 + i % 3) for i in range(count)]


class _NoParameters(nn.Module):
    """A backbone of elementwise maps and average pooling: the same bits in every process,
    whatever its thread count (float32 convolutions may pick other algorithms there)."""

    def forward(self, x):
        return [torch.tanh(1.7 * x + 0.2), nn.functional.avg_pool2d(torch.cat([x.sin(), (2 * x).cos()], 1), 2)]


TINY = _NoParameters()
TINY_WEIGHTS = [torch.linspace(0.1, 0.6, 3), torch.linspace(0.5, 0.1, 6)]


def _lpips_reference(reduction):
    def reference(img1, img2):
        scores = learned_perceptual_image_patch_similarity(
            img1.double(), img2.double(), reduction=reduction, net=TINY, weights=TINY_WEIGHTS
        )
        return scores.float()

    return reference


LPIPS_CASES = [
    MetricCase(
        f"lpips-{reduction}",
        functools.partial(LPIPS, "alex", reduction, net=TINY, weights=TINY_WEIGHTS),
        batches=_lpips_batches(10, 5),
        reference=_lpips_reference(reduction),
        rtol=1e-5,
        atol=1e-7,
    )
    for reduction in ("mean", "none")
]


@pytest.mark.parametrize("case", LPIPS_CASES, ids=lambda c: c.name)
def test_lpips_lifecycle(case):
    check_metric(case)


@pytest.mark.distributed
def test_lpips_distributed_uneven_shards():
    run_distributed_cases(LPIPS_CASES, world_size=2)
