"""The networks behind LPIPS, DISTS and the perceptual path length: the user's backbone read at
its feature taps, the learned per-channel weights loaded from a local file, and the checks on the
image pairs they compare.

torchtally never downloads weights and needs no torchvision: the backbone comes as the user's
``nn.Module``, either one that returns its list of feature maps, or an ``nn.Sequential`` laid
out as torchvision's ``features`` of AlexNet, VGG16 or SqueezeNet 1.1 (for example
``torchvision.models.vgg16(weights=None).features`` with a state dict loaded from a local file),
read after the layers where LPIPS and DISTS tap it.
"""

import os
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import torch
from torch import Tensor, nn

__all__: List[str] = []

# Index of the last layer of each slice of torchvision's ``features``, per backbone.
FEATURE_TAPS: Dict[str, Tuple[int, ...]] = {
    "alex": (1, 4, 7, 9, 11),
    "vgg": (3, 8, 15, 22, 29),
    "squeeze": (1, 4, 7, 9, 10, 11, 12),
}
NET_TYPES = tuple(FEATURE_TAPS)

WeightsLike = Union[str, "os.PathLike[str]", Mapping[str, Tensor], Sequence[Tensor]]


class FeatureTaps(nn.Module):
    """An ``nn.Sequential`` run layer by layer, returning its output after each tap index;
    ``replace`` swaps the layer at an index for another module (DISTS' L2 pooling)."""

    def __init__(self, layers: nn.Sequential, taps: Sequence[int], replace: Optional[Dict[int, nn.Module]] = None):
        super().__init__()
        if len(layers) <= max(taps):
            raise ValueError(
                f"net: expected an nn.Sequential of at least {max(taps) + 1} layers (torchvision's `features`, read "
                f"after layers {tuple(taps)}), got {len(layers)} layers"
            )
        replace = replace or {}
        self.layers = nn.ModuleList([replace.get(i, layer) for i, layer in enumerate(layers)][: max(taps) + 1])
        self.taps = tuple(taps)

    def forward(self, x: Tensor) -> List[Tensor]:
        out = []
        for i, layer in enumerate(self.layers):
            x = layer(x)
            if i in self.taps:
                out.append(x)
        return out


def backbone(
    metric: str, net: Optional[nn.Module], net_type: str, what: str, replace: Optional[Dict[int, nn.Module]] = None
) -> nn.Module:
    """The user's ``net`` as a module returning the list of feature maps (an ``nn.Sequential`` is
    tapped at ``net_type``'s layers), or a ValueError saying what to pass."""
    if net is None:
        raise ValueError(
            f"{metric}: no network. torchtally never downloads weights: pass `net=`, {what}, and `weights=`, a local "
            "path to the learned weights (or the tensors themselves)"
        )
    if not isinstance(net, nn.Module):
        raise TypeError(f"{metric}: `net` must be an nn.Module, got {type(net).__name__}")
    if isinstance(net, nn.Sequential):
        return FeatureTaps(net, FEATURE_TAPS[net_type], replace)
    return net


def check_net_type(net_type: Any) -> str:
    if net_type not in NET_TYPES:
        raise ValueError(f"Argument `net_type` must be one of {NET_TYPES}, but got {net_type}.")
    return str(net_type)


def load_weights(metric: str, weights: Optional[WeightsLike]) -> Any:
    """``weights`` as given, or loaded (``torch.load``, tensors only) from a local file."""
    if weights is None:
        raise ValueError(
            f"{metric}: no `weights`. torchtally never downloads them: pass a local path to the learned weights "
            "(or the tensors themselves)"
        )
    if isinstance(weights, (str, os.PathLike)):
        if not os.path.isfile(weights):
            raise ValueError(f"{metric}: `weights`={os.fspath(weights)!r} is not a local file")
        return torch.load(os.fspath(weights), map_location="cpu", weights_only=True)
    return weights


def linear_weights(weights: Any) -> List[Tensor]:
    """LPIPS' 1x1 linear layers, one float64 vector per tapped layer: a state dict with keys
    ``lin<k>.model.<i>.weight`` (the published LPIPS files), or a sequence of tensors of
    ``C_k`` elements each."""
    if isinstance(weights, Mapping):
        keyed = {}
        for key, value in weights.items():
            parts = str(key).split(".")
            if parts[0].startswith("lin") and parts[0][3:].isdigit() and parts[-1] == "weight":
                keyed[int(parts[0][3:])] = value
        if not keyed or sorted(keyed) != list(range(len(keyed))):
            raise ValueError(
                f"weights: expected LPIPS linear layers keyed 'lin0...weight', 'lin1...weight', ..., got keys "
                f"{list(weights)[:8]}"
            )
        weights = [keyed[k] for k in range(len(keyed))]
    if isinstance(weights, Tensor) or not isinstance(weights, Sequence) or not weights:
        raise TypeError(f"weights: expected a state dict or a sequence of tensors, got {type(weights).__name__}")
    out = []
    for k, w in enumerate(weights):
        if not isinstance(w, Tensor) or not w.is_floating_point():
            raise TypeError(f"weights: layer {k}: expected a floating-point tensor, got {w!r:.60}")
        out.append(w.detach().reshape(-1).to("cpu", torch.float64))
    return out


def check_image_pair(
    img1: Any, img2: Any, names: Tuple[str, str], value_range: Optional[Tuple[Optional[float], Optional[float]]]
) -> None:
    """Two floating-point batches of RGB images [N, 3, H, W] of one shape, finite, within
    ``value_range`` (low, high; None: unbounded)."""
    for img, name in zip((img1, img2), names):
        if not isinstance(img, Tensor):
            raise TypeError(f"{name}: expected a tensor, got {type(img).__name__}")
        if not img.is_floating_point():
            raise TypeError(f"{name}: expected floating-point images, got {img.dtype}")
        if img.dim() != 4 or img.shape[1] != 3:
            raise ValueError(f"{name}: expected images of shape [N, 3, H, W], got {list(img.shape)}")
    if img1.shape != img2.shape:
        raise ValueError(f"{names[1]}: expected the shape of {names[0]} {list(img1.shape)}, got {list(img2.shape)}")
    if img1.device != img2.device:
        raise ValueError(f"{names[1]}: expected a tensor on {img1.device}, where {names[0]} is, got {img2.device}")
    if img1.numel() == 0:
        return
    for img, name in zip((img1, img2), names):
        if not bool(torch.isfinite(img.detach()).all()):
            raise ValueError(f"{name}: expected finite values, got NaN or infinity")
        if value_range is not None:
            low, high = value_range
            lo, hi = float(img.detach().min()), float(img.detach().max())
            if (low is not None and lo < low) or (high is not None and hi > high):
                want = f"[{low}, {high}]" if high is not None else f">= {low}"
                raise ValueError(f"{name}: expected values in {want}, got values in [{lo}, {hi}]")


def on_network(net: nn.Module, img: Tensor, name: str) -> Tensor:
    """``img`` in the dtype of the network's floating-point parameters, which must be on the
    image's device (ValueError naming both otherwise)."""
    for p in net.parameters():
        if p.device != img.device:
            raise ValueError(
                f"{name}: the images are on {img.device} and the network's parameters on {p.device}: move the "
                f"network (net.to({str(img.device)!r})) or the images"
            )
        if p.is_floating_point():
            return img.to(p.dtype)
    return img


def feature_list(feats: Any, name: str) -> List[Tensor]:
    """The network's output as a list of [N, C, H, W] feature maps."""
    if isinstance(feats, Tensor) or not isinstance(feats, Sequence):
        raise ValueError(f"net: expected the network to return a list of feature maps, got {type(feats).__name__}")
    for k, f in enumerate(feats):
        if not isinstance(f, Tensor) or f.dim() != 4:
            raise ValueError(f"net: feature map {k} for {name}: expected a [N, C, H, W] tensor, got {f!r:.60}")
    return list(feats)


def add_scores(sums: Tuple[Tensor, Tensor], scores: Tensor) -> Tuple[Tensor, Tensor]:
    """(float64 sum of scores, int64 count of pairs) with the batch's scores added."""
    total, count = sums
    return total + scores.sum().to(total.device), count + scores.shape[0]
