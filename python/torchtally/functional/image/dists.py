"""Deep Image Structure and Texture Similarity (DISTS): one minus a weighted sum, over the image
and the feature maps of a VGG16 whose max pooling is replaced by L2 pooling, of per-channel
structure (means) and texture (variances, covariance) similarities
(torchmetrics.functional.image's deep_image_structure_and_texture_similarity).

The VGG16 and the learned weights (alpha, beta) are the user's (see perceptual_nets): nothing is
downloaded. The backbone runs in its own dtype; everything after it is float64.
"""

from typing import Any, List, Optional, Tuple

import torch
from torch import Tensor, nn
from torch.nn import functional as F

from .perceptual_nets import WeightsLike, backbone, check_image_pair, feature_list, load_weights, on_network

__all__ = ["deep_image_structure_and_texture_similarity"]

# ImageNet's per-channel mean and standard deviation, the normalisation VGG16 was trained with.
_MEAN = (0.485, 0.456, 0.406)
_STD = (0.229, 0.224, 0.225)
_C1 = _C2 = 1e-6  # stabilisers of the structure and texture terms
_HANN = (0.25, 0.5, 0.25)  # the 5-point Hann window without its zero ends, normalised
_POOLED = (4, 9, 16, 23)  # torchvision VGG16 `features`: the max pooling layers DISTS replaces

_WHAT = (
    "torchvision's `vgg16().features` with weights loaded from a local file (its max pooling becomes L2 pooling), "
    "or a module returning the 5 feature maps of the ImageNet-normalised image"
)


class L2Pooling(nn.Module):
    """sqrt(blur(x^2) + 1e-12) with stride 2: the 3x3 Hann window (1, 2, 1)/4 in each direction,
    per channel, zero padding 1."""

    def forward(self, x: Tensor) -> Tensor:
        squared = F.pad(x * x, (1, 1, 1, 1))
        rows, cols = (x.shape[2] - 1) // 2 + 1, (x.shape[3] - 1) // 2 + 1
        out = torch.zeros(x.shape[0], x.shape[1], rows, cols, dtype=x.dtype, device=x.device)
        for i, wi in enumerate(_HANN):
            for j, wj in enumerate(_HANN):
                out = out + (wi * wj) * squared[:, :, i : i + 2 * rows - 1 : 2, j : j + 2 * cols - 1 : 2]
        return torch.sqrt(out + 1e-12)


class DISTSNetwork(nn.Module):
    """DISTS as a module: ``forward(preds, target)`` gives the float64 score of each pair [N].
    ``features``: the backbone returning the feature maps of the normalised image; ``alpha``,
    ``beta``: float64 weights, one per channel of the image and of every feature map."""

    def __init__(self, features: nn.Module, alpha: Tensor, beta: Tensor) -> None:
        super().__init__()
        self.features = features
        total = alpha.sum() + beta.sum()
        self.alpha, self.beta = alpha / total, beta / total  # plain float64 tensors, not buffers
        features.eval()

    def _maps(self, img: Tensor, name: str) -> List[Tensor]:
        x = on_network(self.features, img, name)
        mean = torch.tensor(_MEAN, dtype=x.dtype, device=x.device).view(1, 3, 1, 1)
        std = torch.tensor(_STD, dtype=x.dtype, device=x.device).view(1, 3, 1, 1)
        return [x] + feature_list(self.features((x - mean) / std), name)

    def forward(self, preds: Tensor, target: Tensor) -> Tensor:
        maps1, maps2 = self._maps(preds, "preds"), self._maps(target, "target")
        channels = [m.shape[1] for m in maps1]
        if sum(channels) != self.alpha.numel() or [m.shape for m in maps1] != [m.shape for m in maps2]:
            raise ValueError(
                f"net: the image and its feature maps have {channels} channels ({sum(channels)} in all); `weights` "
                f"holds {self.alpha.numel()} alpha and beta values"
            )
        alphas = torch.split(self.alpha.to(preds.device), channels)
        betas = torch.split(self.beta.to(preds.device), channels)
        score = torch.ones(preds.shape[0], dtype=torch.float64, device=preds.device)
        for x, y, alpha, beta in zip(maps1, maps2, alphas, betas):
            x, y = x.to(torch.float64), y.to(torch.float64)
            mx, my = x.mean((2, 3)), y.mean((2, 3))  # [N, C]
            dx, dy = x - mx[:, :, None, None], y - my[:, :, None, None]
            vx, vy, cov = (dx * dx).mean((2, 3)), (dy * dy).mean((2, 3)), (dx * dy).mean((2, 3))
            structure = (2 * mx * my + _C1) / (mx * mx + my * my + _C1)
            texture = (2 * cov + _C2) / (vx + vy + _C2)
            score = score - structure @ alpha - texture @ beta
        return score


def alpha_beta(weights: Any) -> Tuple[Tensor, Tensor]:
    """DISTS' alpha and beta from ``{"alpha": ..., "beta": ...}``, as float64 vectors."""
    if not hasattr(weights, "keys") or "alpha" not in weights or "beta" not in weights:
        raise ValueError(f"weights: expected a mapping with 'alpha' and 'beta', got {type(weights).__name__}")
    alpha, beta = weights["alpha"], weights["beta"]
    if not isinstance(alpha, Tensor) or not isinstance(beta, Tensor) or alpha.numel() != beta.numel():
        raise ValueError("weights: expected 'alpha' and 'beta' tensors with as many elements")
    return alpha.detach().reshape(-1).to("cpu", torch.float64), beta.detach().reshape(-1).to("cpu", torch.float64)


def dists_network(metric: str, net: Optional[nn.Module], weights: Optional[WeightsLike]) -> DISTSNetwork:
    """The DISTS module from the user's VGG16 and alpha/beta (ValueError saying what to pass
    when either is missing)."""
    features = backbone(metric, net, "vgg", _WHAT, {i: L2Pooling() for i in _POOLED})
    return DISTSNetwork(features, *alpha_beta(load_weights(metric, weights)))


def check_dists_reduction(reduction: Optional[str], allowed: Tuple[Optional[str], ...]) -> None:
    if reduction not in allowed:
        raise ValueError(f"Argument `reduction` expected to be one of {allowed} but got {reduction}")


def dists_scores(network: nn.Module, preds: Tensor, target: Tensor) -> Tensor:
    """The float64 DISTS score of each pair [N] (images [N, 3, H, W], finite)."""
    check_image_pair(preds, target, ("preds", "target"), None)
    if preds.shape[0] == 0:
        return torch.zeros(0, dtype=torch.float64, device=preds.device)
    return network(preds, target)


def deep_image_structure_and_texture_similarity(
    preds: Tensor,
    target: Tensor,
    reduction: Optional[str] = None,
    *,
    net: Optional[nn.Module] = None,
    weights: Optional[WeightsLike] = None,
) -> Tensor:
    """DISTS between ``preds`` and ``target`` [N, 3, H, W] (RGB in [0, 1]): lower is more
    similar. ``reduction``: None or "none" (default) for one score per pair (0-d for one pair,
    as torchmetrics), "mean" or "sum". The result has ``preds``' dtype and carries the gradient
    to the images.

    The network is yours; nothing is downloaded. ``net``: torchvision's ``vgg16().features``
    (an ``nn.Sequential``; its max pooling layers 4, 9, 16 and 23 become L2 pooling, and it is
    read after layers 3, 8, 15, 22 and 29), or any module returning the feature maps of the
    ImageNet-normalised image. ``weights``: alpha and beta, one per channel of the image and of
    each feature map (1475 for VGG16): a local path to a file holding ``{"alpha", "beta"}`` (as
    torchmetrics' and the DISTS authors' weight files), or such a dict.

    Differences from torchmetrics: the ``net`` and ``weights`` keywords (torchmetrics downloads
    torchvision's VGG16 weights; without ``net`` or ``weights`` this raises ValueError); the
    images are cast to the network's dtype (torchmetrics: float32 only); float64 after the
    backbone, covariances from centred features; NaN or infinite values, differing shapes and
    non-floating images raise.

        >>> import torch
        >>> from torchtally.functional.image import deep_image_structure_and_texture_similarity
        >>> class Maps(torch.nn.Module):  # a backbone returning its feature maps
        ...     def __init__(self):
        ...         super().__init__()
        ...         self.conv = torch.nn.Conv2d(3, 4, 3, stride=2)
        ...     def forward(self, x):
        ...         return [self.conv(x).relu()]
        >>> _ = torch.manual_seed(0)
        >>> net = Maps().requires_grad_(False)
        >>> weights = {"alpha": torch.full((7,), 0.1), "beta": torch.full((7,), 0.1)}  # 3 + 4 channels
        >>> preds, target = torch.rand(2, 3, 16, 16), torch.rand(2, 3, 16, 16)
        >>> deep_image_structure_and_texture_similarity(preds, target, net=net, weights=weights)
        tensor([0.4807, 0.4926])
    """
    check_dists_reduction(reduction, ("mean", "sum", "none", None))
    network = dists_network("deep_image_structure_and_texture_similarity", net, weights)
    scores = dists_scores(network, preds, target)
    if reduction == "mean":
        return scores.mean().to(preds.dtype)
    if reduction == "sum":
        return scores.sum().to(preds.dtype)
    return (scores.reshape(()) if scores.numel() == 1 else scores).to(preds.dtype)
