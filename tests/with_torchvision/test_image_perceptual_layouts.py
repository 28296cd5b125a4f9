"""LPIPS and DISTS on torchvision's real ``features`` layouts (AlexNet, VGG16, SqueezeNet 1.1;
randomly initialised, nothing downloaded) against torchmetrics 1.9 fed the same backbones: the
layers torchtally taps and replaces are the ones torchmetrics slices."""

import copy
import functools
import os
import types
from unittest import mock

import pytest
import torch
import torchmetrics.functional.image.dists as tm_dists
import torchmetrics.functional.image.lpips as tm_lpips
import torchvision
from support.metric_tester import assert_same

from torchtally.functional.image import (
    deep_image_structure_and_texture_similarity,
    learned_perceptual_image_patch_similarity,
)

_TM_DIR = os.path.dirname(tm_lpips.__file__)
_BUILDERS = {"alex": "alexnet", "vgg": "vgg16", "squeeze": "squeezenet1_1"}
_SIZES = {"alex": 64, "vgg": 32, "squeeze": 32}  # the smallest each backbone reads to its last tap, about


@functools.cache
def _features(name):
    torch.manual_seed(0)
    if name == "vgg16":  # the features alone: initialising VGG16's 120M-parameter classifier is slow
        from torchvision.models import vgg

        return vgg.make_layers(vgg.cfgs["D"]).requires_grad_(False)
    return getattr(torchvision.models, name)(weights=None).features.requires_grad_(False)


@pytest.mark.parametrize("net_type", ["alex", "vgg", "squeeze"])
def test_lpips_taps_torchvision_layouts_as_torchmetrics(net_type):
    features = _features(_BUILDERS[net_type])
    g = torch.Generator().manual_seed(1)
    size = _SIZES[net_type]
    img1, img2 = (torch.rand(2, 3, size, size, generator=g) * 2 - 1 for _ in range(2))
    with mock.patch.object(tm_lpips, "_get_tv_model_features", lambda *a, **k: copy.deepcopy(features)):
        expected = tm_lpips.learned_perceptual_image_patch_similarity(img1, img2, net_type, "none")
    weights = os.path.join(_TM_DIR, "lpips_models", f"{net_type}.pth")
    got = learned_perceptual_image_patch_similarity(img1, img2, net_type, "none", net=features, weights=weights)
    assert_same(got, expected, rtol=1e-5)


def test_dists_replaces_and_taps_torchvision_vgg16_as_torchmetrics():
    features = _features("vgg16")
    g = torch.Generator().manual_seed(2)
    preds, target = torch.rand(2, 3, 48, 48, generator=g), torch.rand(2, 3, 48, 48, generator=g)
    vgg16 = lambda weights=None: types.SimpleNamespace(features=copy.deepcopy(features))  # noqa: E731
    with mock.patch.object(tm_dists, "vgg16", vgg16):
        expected = tm_dists.deep_image_structure_and_texture_similarity(preds, target).detach()
    weights = os.path.join(os.path.dirname(tm_dists.__file__), "dists_models", "weights.pt")
    got = deep_image_structure_and_texture_similarity(preds, target, net=features, weights=weights)
    assert_same(got, expected, rtol=1e-5)
