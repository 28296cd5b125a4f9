"""ARNIQA with a tiny encoder and regressor against the formula computed directly (half-size
antialiased copy, ImageNet normalisation, L2-normalised features, dataset scaling); what to
pass without a network; bad input raises with the state unchanged; 3 gloo ranks == one
process."""

import functools

import pytest
import torch
import torch.nn.functional as F
from support.audio_models import arniqa_metric, arniqa_parts
from support.metric_tester import MetricCase, assert_rejects, check_metric, run_distributed_cases

from torchtally.functional.image import arniqa
from torchtally.image.arniqa import ARNIQA


def _images(seed, n, size=16):
    return torch.rand(n, 3, size, size + 2, generator=torch.Generator().manual_seed(seed))


def _direct(img, dataset="koniq10k", normalize=True):
    encoder, regressor = arniqa_parts()
    half = F.interpolate(img, size=(img.shape[2] // 2, img.shape[3] // 2), mode="bilinear", antialias=True)
    if normalize:
        mean = torch.tensor([0.485, 0.456, 0.406]).reshape(1, 3, 1, 1)
        std = torch.tensor([0.229, 0.224, 0.225]).reshape(1, 3, 1, 1)
        img, half = (img - mean) / std, (half - mean) / std
    with torch.no_grad():
        f = torch.cat([F.normalize(encoder(img), dim=1), F.normalize(encoder(half), dim=1)], dim=1)
        low, high = {"koniq10k": (1, 100), "kadid10k": (1, 5)}[dataset]
        return ((regressor(f) - low) / (high - low)).reshape(-1)


@pytest.mark.parametrize("dataset", ["koniq10k", "kadid10k"])
@pytest.mark.parametrize("normalize", [True, False])
def test_functional_equals_the_formula(dataset, normalize):
    img = _images(0, 5)
    encoder, regressor = arniqa_parts()
    kw = dict(encoder=encoder, regressor=regressor, regressor_dataset=dataset, normalize=normalize)
    want = _direct(img, dataset, normalize)
    torch.testing.assert_close(arniqa(img, reduction="none", **kw).detach(), want)
    torch.testing.assert_close(arniqa(img, reduction="sum", **kw).detach(), want.sum())
    torch.testing.assert_close(arniqa(img, **kw).detach(), want.mean())


def test_no_network_says_what_to_pass():
    with pytest.raises(ValueError, match="encoder=.*regressor=.*nothing is downloaded"):
        ARNIQA()
    with pytest.raises(ValueError, match="regressor_dataset"):
        arniqa_metric(regressor_dataset="tid")
    with pytest.raises(ValueError, match="reduction"):
        arniqa_metric(reduction="max")


def test_bad_input_raises_with_the_state_unchanged():
    img = _images(1, 2)
    for m in (arniqa_metric().update(img), arniqa_metric(reduction="none").update(img)):
        assert_rejects(m, (img[:, :2],), ValueError, r"shape \[N, 3, H, W\]")
        assert_rejects(m, (img * 2,), ValueError, r"\[0, 1\] range")
        assert_rejects(m, ((img * 255).to(torch.uint8),), TypeError, "img: expected a floating")
        assert_rejects(m, (img.numpy(),), TypeError, "img: expected a torch.Tensor")


def _batches(seed, count):
    return [(_images(seed + i, 1 + i % 3),) for i in range(count)]


CASES = [
    MetricCase("arniqa-mean", arniqa_metric, _batches(10, 5), lambda x: _direct(x).mean(), rtol=1e-5, atol=1e-7),
    MetricCase("arniqa-sum", functools.partial(arniqa_metric, reduction="sum"), _batches(20, 5),
               lambda x: _direct(x).sum(), rtol=1e-5, atol=1e-7),
    MetricCase("arniqa-none", functools.partial(arniqa_metric, reduction="none"), _batches(30, 5), _direct,
               rtol=1e-5, atol=1e-7),
]  # fmt: skip


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_lifecycle(case):
    check_metric(case)


@pytest.mark.distributed
def test_distributed_uneven_shards_equal_one_process():
    run_distributed_cases(CASES, world_size=3)
