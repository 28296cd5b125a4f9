"""The InceptionV3 feature extractor behind ``feature=<int or str>`` of the generative-image
metrics (FID, KID, IS, MiFID), built from torch-fidelity's network with local weights only.

Nothing downloads here: the weights come from ``feature_extractor_weights_path`` or, when that
is None, from torch-fidelity's file in the torch hub cache (``<torch.hub.get_dir()>/checkpoints``)
if a previous download left it there. Otherwise a FileNotFoundError says what to pass; without
torch-fidelity a ModuleNotFoundError does. Either way an ``nn.Module`` given as ``feature``
needs neither.

The forward taps the same layers as torchmetrics' extractor: uint8 images [N, 3, H, W] resized
to 299x299 (bilinear with antialiasing, or TensorFlow 1.x's resize when ``antialias`` is
False), scaled to [-1, 1), then the pooled output of the block the feature names.
"""

import os
from typing import Any, List, Optional, Union

import torch
from torch import Tensor, nn
from torch.nn.functional import adaptive_avg_pool2d, interpolate

__all__ = ["WEIGHTS_FILE", "inception_extractor"]

WEIGHTS_FILE = "weights-inception-2015-12-05-6726825d.pth"  # torch-fidelity's cached file name
_SIZE = 299
# Blocks of torch-fidelity's InceptionV3 in order; a feature is read after the block it names.
_STEM = ("Conv2d_1a_3x3", "Conv2d_2a_3x3", "Conv2d_2b_3x3", "MaxPool_1")
_MIDDLE = ("Conv2d_3b_1x1", "Conv2d_4a_3x3", "MaxPool_2")
_MIXED = ("Mixed_5b", "Mixed_5c", "Mixed_5d", "Mixed_6a", "Mixed_6b", "Mixed_6c", "Mixed_6d", "Mixed_6e")
_TOP = ("Mixed_7a", "Mixed_7b", "Mixed_7c", "AvgPool")


def _pooled(x: Tensor) -> Tensor:
    return adaptive_avg_pool2d(x, output_size=(1, 1)).flatten(1)


class _FrozenInception(nn.Module):
    """torch-fidelity's InceptionV3 in evaluation mode, returning one feature [N, D]."""

    def __init__(self, net: nn.Module, feature: str, antialias: bool) -> None:
        super().__init__()
        self.net = net.eval()
        for p in self.net.parameters():
            p.requires_grad_(False)
        self.feature = feature
        self.antialias = antialias
        self.num_features = {"64": 64, "192": 192, "768": 768, "2048": 2048}.get(feature, 1008)

    def train(self, mode: bool = True) -> "_FrozenInception":
        return super().train(False)

    def _run(self, names: Any, x: Tensor) -> Tensor:
        for name in names:
            x = getattr(self.net, name)(x)
        return x

    def forward(self, imgs: Tensor) -> Tensor:
        if not isinstance(imgs, Tensor) or imgs.dtype != torch.uint8 or imgs.dim() != 4 or imgs.shape[1] != 3:
            got = f"{imgs.dtype} {tuple(imgs.shape)}" if isinstance(imgs, Tensor) else type(imgs).__name__
            raise TypeError(f"imgs: the InceptionV3 extractor expects uint8 images [N, 3, H, W], got {got}")
        x = imgs.float()
        if self.antialias:
            x = interpolate(x, size=(_SIZE, _SIZE), mode="bilinear", align_corners=False, antialias=True)
        else:
            from torch_fidelity.interpolate_compat_tensorflow import interpolate_bilinear_2d_like_tensorflow1x  # type: ignore[import-untyped,import-not-found,unused-ignore]  # optional

            x = interpolate_bilinear_2d_like_tensorflow1x(x, size=(_SIZE, _SIZE), align_corners=False)
        x = self._run(_STEM, (x - 128) / 128)
        if self.feature == "64":
            return _pooled(x)
        x = self._run(_MIDDLE, x)
        if self.feature == "192":
            return _pooled(x)
        x = self._run(_MIXED, x)
        if self.feature == "768":
            return _pooled(x)
        x = torch.flatten(self._run(_TOP, x), 1)
        if self.feature == "2048":
            return x
        fc: Any = self.net.fc
        return x @ fc.weight.T if self.feature == "logits_unbiased" else fc(x)


def inception_extractor(
    metric: str,
    feature: Union[int, str],
    valid: List[Union[int, str]],
    weights_path: Optional[str] = None,
    antialias: bool = True,
) -> nn.Module:
    """torch-fidelity's InceptionV3 returning ``feature`` (one of ``valid``), from local weights.

    ModuleNotFoundError without torch-fidelity, FileNotFoundError without a weights file; both
    say to pass an ``nn.Module`` as ``feature`` instead."""
    if feature not in valid:
        raise ValueError(f"Integer input to argument `feature` must be one of {tuple(valid)}, but got {feature!r}.")
    instead = "pass an nn.Module as `feature` (any extractor returning [N, D] features for a batch of images)"
    try:
        from torch_fidelity.feature_extractor_inceptionv3 import FeatureExtractorInceptionV3  # type: ignore[import-untyped,import-not-found,unused-ignore]  # optional
    except ModuleNotFoundError as error:
        raise ModuleNotFoundError(
            f"{metric}(feature={feature!r}) needs torch-fidelity's InceptionV3, and torch-fidelity is not "
            f"installed; {instead}, or install torch-fidelity and give a local weights file"
        ) from error
    path = weights_path
    if path is None:
        path = os.path.join(torch.hub.get_dir(), "checkpoints", WEIGHTS_FILE)
    if not os.path.isfile(path):
        where = "feature_extractor_weights_path" if weights_path is not None else "torch hub's cache"
        raise FileNotFoundError(
            f"{metric}(feature={feature!r}): no InceptionV3 weights at {path} ({where}) and torchtally does not "
            f"download; {instead}, or pass the path of the weights file ({WEIGHTS_FILE}) "
            "as `feature_extractor_weights_path`"
        )
    net = FeatureExtractorInceptionV3("inception-v3-compat", [str(feature)], path)
    return _FrozenInception(net, str(feature), antialias)
