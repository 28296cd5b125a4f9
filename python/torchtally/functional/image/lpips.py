"""Learned Perceptual Image Patch Similarity (LPIPS): the distance between two images as the
weighted, spatially averaged squared difference of their channel-normalised deep features, summed
over the tapped layers of a backbone (torchmetrics.functional.image's
learned_perceptual_image_patch_similarity).

The backbone and the learned 1x1 linear layers are the user's (see perceptual_nets): nothing is
downloaded. The backbone runs in its own dtype; everything after it (normalisation, differences,
weights, averages, the sum over layers) is float64.
"""

from typing import List, Optional

import torch
from torch import Tensor, nn
from torch.nn import functional as F

from .perceptual_nets import (
    WeightsLike,
    backbone,
    check_image_pair,
    check_net_type,
    feature_list,
    linear_weights,
    load_weights,
    on_network,
)

__all__ = ["learned_perceptual_image_patch_similarity"]

# LPIPS' input scaling (per RGB channel): (x - shift) / scale, for images in [-1, 1].
_SHIFT = (-0.030, -0.088, -0.188)
_SCALE = (0.458, 0.448, 0.450)
_NORM_EPS = 1e-8  # under the square root of each position's squared feature norm
REDUCTIONS = ("mean", "sum", "none", None)

_WHAT = (
    "a backbone (torchvision's `features` of the chosen `net_type`, with weights loaded from a local file, or a "
    "module returning the list of feature maps)"
)


class LPIPSNetwork(nn.Module):
    """LPIPS as a module: ``forward(img1, img2, normalize=False)`` gives the float64 distance of
    each pair [N]. ``features``: the backbone returning its feature maps; ``weights``: one float64
    vector per feature map (the 1x1 linear layers); ``resize``: images scaled to this size after
    the input scaling (area when both sides are larger, else bilinear), as PPL does."""

    def __init__(self, features: nn.Module, weights: List[Tensor], resize: Optional[int] = None) -> None:
        super().__init__()
        self.features = features
        self.weights = weights  # plain tensors, not buffers: float64 whatever .to() the module gets
        self.resize = resize
        features.eval()

    def _scaled(self, img: Tensor, normalize: bool, name: str) -> Tensor:
        x = on_network(self.features, img, name)
        if normalize:
            x = 2 * x - 1
        shift = torch.tensor(_SHIFT, dtype=x.dtype, device=x.device).view(1, 3, 1, 1)
        scale = torch.tensor(_SCALE, dtype=x.dtype, device=x.device).view(1, 3, 1, 1)
        x = (x - shift) / scale
        if self.resize is not None:
            size = (self.resize, self.resize)
            if x.shape[-1] > self.resize and x.shape[-2] > self.resize:
                x = F.interpolate(x, size, mode="area")
            else:
                x = F.interpolate(x, size, mode="bilinear", align_corners=False)
        return x

    def forward(self, img1: Tensor, img2: Tensor, normalize: bool = False) -> Tensor:
        feats1 = feature_list(self.features(self._scaled(img1, normalize, "img1")), "img1")
        feats2 = feature_list(self.features(self._scaled(img2, normalize, "img2")), "img2")
        if len(feats1) != len(self.weights) or len(feats2) != len(self.weights):
            raise ValueError(
                f"net: returned {len(feats1)} feature maps, and `weights` holds {len(self.weights)} linear layers"
            )
        score = torch.zeros(img1.shape[0], dtype=torch.float64, device=img1.device)
        for k, (a, b, w) in enumerate(zip(feats1, feats2, self.weights)):
            if a.shape != b.shape or a.shape[1] != w.numel():
                raise ValueError(
                    f"net: feature map {k} has shape {list(a.shape)} (img1) and {list(b.shape)} (img2); linear layer "
                    f"{k} of `weights` has {w.numel()} channels"
                )
            a, b = a.to(torch.float64), b.to(torch.float64)
            a = a / torch.sqrt(_NORM_EPS + (a * a).sum(1, keepdim=True))
            b = b / torch.sqrt(_NORM_EPS + (b * b).sum(1, keepdim=True))
            per_channel = ((a - b) ** 2).mean((2, 3))  # [N, C]
            score = score + per_channel @ w.to(per_channel.device)
        return score


def lpips_network(
    metric: str, net: Optional[nn.Module], weights: Optional[WeightsLike], net_type: str, resize: Optional[int] = None
) -> LPIPSNetwork:
    """The LPIPS module from the user's backbone and linear weights (ValueError saying what to
    pass when either is missing)."""
    features = backbone(metric, net, net_type, _WHAT)
    return LPIPSNetwork(features, linear_weights(load_weights(metric, weights)), resize)


def check_lpips_options(reduction: Optional[str], normalize: bool) -> None:
    if reduction not in REDUCTIONS:
        raise ValueError(f"Argument `reduction` must be one of {REDUCTIONS}, but got {reduction}")
    if not isinstance(normalize, bool):
        raise ValueError(f"Argument `normalize` should be an bool but got {normalize}")


def lpips_scores(network: nn.Module, img1: Tensor, img2: Tensor, normalize: bool) -> Tensor:
    """The float64 LPIPS distance of each pair [N], after torchmetrics' checks (images
    [N, 3, H, W]; in [0, 1] with ``normalize``, else >= -1) and finite values."""
    check_image_pair(img1, img2, ("img1", "img2"), (0.0, 1.0) if normalize else (-1.0, None))
    if img1.shape[0] == 0:
        return torch.zeros(0, dtype=torch.float64, device=img1.device)
    return network(img1, img2, normalize=normalize)


def reduce_scores(scores: Tensor, reduction: Optional[str]) -> Tensor:
    if reduction == "mean":
        return scores.mean()
    if reduction == "sum":
        return scores.sum()
    return scores


def learned_perceptual_image_patch_similarity(
    img1: Tensor,
    img2: Tensor,
    net_type: str = "alex",
    reduction: Optional[str] = "mean",
    normalize: bool = False,
    *,
    net: Optional[nn.Module] = None,
    weights: Optional[WeightsLike] = None,
) -> Tensor:
    """LPIPS between the images ``img1`` and ``img2`` [N, 3, H, W] (in [-1, 1], or in [0, 1]
    with ``normalize=True``): lower is more similar. ``reduction``: "mean", "sum", or
    "none"/None for one value per pair (a 0-d tensor for one pair, as torchmetrics). The result
    has ``img1``'s dtype and carries the gradient to the images.

    The network is yours; nothing is downloaded. ``net``: an ``nn.Sequential`` laid out as
    torchvision's ``features`` of ``net_type`` ("alex": AlexNet, "vgg": VGG16, "squeeze":
    SqueezeNet 1.1, read after the layers LPIPS taps), or any module returning the list of
    feature maps. ``weights``: the 1x1 linear layers, a local path to an LPIPS weight file
    (keys ``lin<k>.model.<i>.weight``, e.g. the ``alex.pth`` shipped with the ``lpips`` package),
    such a state dict, or one tensor of ``C_k`` elements per feature map.

    Differences from torchmetrics: the ``net`` and ``weights`` keywords (torchmetrics downloads
    torchvision's ImageNet weights and reads its bundled linear layers; without ``net`` or
    ``weights`` this raises ValueError); the images are cast to the network's dtype; float64
    after the backbone; NaN or infinite values, differing shapes and non-floating images raise.

        >>> import torch
        >>> from torchtally.functional.image import learned_perceptual_image_patch_similarity
        >>> class TwoMaps(torch.nn.Module):  # a backbone returning its feature maps
        ...     def __init__(self):
        ...         super().__init__()
        ...         self.a, self.b = torch.nn.Conv2d(3, 4, 3), torch.nn.Conv2d(4, 5, 3)
        ...     def forward(self, x):
        ...         h = self.a(x).relu()
        ...         return [h, self.b(h)]
        >>> _ = torch.manual_seed(0)
        >>> net = TwoMaps().requires_grad_(False)
        >>> img1, img2 = torch.rand(2, 3, 16, 16) * 2 - 1, torch.rand(2, 3, 16, 16) * 2 - 1
        >>> weights = [torch.full((4,), 0.5), torch.full((5,), 0.25)]
        >>> learned_perceptual_image_patch_similarity(img1, img2, net=net, weights=weights)
        tensor(0.9131)
        >>> learned_perceptual_image_patch_similarity(img1, img1, reduction="none", net=net, weights=weights)
        tensor([0., 0.])
    """
    check_lpips_options(reduction, normalize)
    network = lpips_network("learned_perceptual_image_patch_similarity", net, weights, check_net_type(net_type))
    scores = lpips_scores(network, img1, img2, normalize)
    if reduction in ("none", None) and scores.numel() == 1:
        scores = scores.reshape(())
    return reduce_scores(scores, reduction).to(img1.dtype)
