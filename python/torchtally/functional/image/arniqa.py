"""``arniqa`` (torchmetrics.functional.image.arniqa's names): ARNIQA's no-reference image
quality, from the user's encoder and regressor.

Per image: the image and its half-size copy (bilinear, antialiased, as torchvision's Resize),
each ImageNet-normalised when ``normalize``, go through the encoder; the two feature vectors
are L2-normalised and concatenated, the regressor maps them to a score, and the score is
scaled by the regressor's dataset range (koniq10k: 1..100, kadid10k: 1..5) to [0, 1].

Nothing downloads: ``encoder`` is an ``nn.Module`` mapping [N, 3, H, W] to [N, D] features
(ARNIQA's: torchvision's resnet50 without its last layer, loaded from ARNIQA's ``ARNIQA.pth``
with the ``model.`` prefix dropped and the projector left out) and ``regressor`` one mapping
[N, 2 D] to [N, 1] (ARNIQA's ``regressor_<dataset>.pth``: an ``nn.Linear(4096, 1)``)."""

from typing import Any, Optional, Tuple

import torch
from torch import Tensor, nn
from torch.nn.functional import interpolate
from torch.nn.functional import normalize as l2_normalize

__all__ = ["arniqa", "arniqa_scores", "check_arniqa_args", "check_arniqa_models"]

DATASET_RANGES = {"kadid10k": (1.0, 5.0), "koniq10k": (1.0, 100.0)}
_MEAN = (0.485, 0.456, 0.406)
_STD = (0.229, 0.224, 0.225)


def check_arniqa_args(regressor_dataset: Any, reduction: Any, normalize: Any) -> None:
    if regressor_dataset not in DATASET_RANGES:
        raise ValueError(
            f"Argument `regressor_dataset` must be one of {tuple(DATASET_RANGES)}, but got {regressor_dataset}."
        )
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"Argument `reduction` must be one of ('mean', 'sum', 'none'), but got {reduction}")
    if not isinstance(normalize, bool):
        raise ValueError(f"Argument `normalize` should be a bool but got {normalize}")


def check_arniqa_models(encoder: Any, regressor: Any) -> Tuple[nn.Module, nn.Module]:
    if encoder is None or regressor is None:
        raise ValueError(
            "ARNIQA needs `encoder=` (an nn.Module mapping [N, 3, H, W] images to [N, D] features; ARNIQA's is "
            "torchvision.models.resnet50() without its fc layer, nn.Sequential(*list(net.children())[:-1]), "
            "loaded from ARNIQA.pth with 'model.' stripped and the 'projector' keys dropped) and `regressor=` "
            "(an nn.Module mapping [N, 2 D] to [N, 1]; ARNIQA's is nn.Linear(4096, 1) loaded from "
            "regressor_koniq10k.pth or regressor_kadid10k.pth), from github.com/miccunifi/ARNIQA's releases; "
            "nothing is downloaded"
        )
    for name, module in (("encoder", encoder), ("regressor", regressor)):
        if not isinstance(module, nn.Module):
            raise TypeError(f"{name}: expected an nn.Module, got {type(module).__name__}")
    return encoder, regressor


def _check_images(img: Any, normalize: bool) -> Tensor:
    if not isinstance(img, Tensor):
        raise TypeError(f"img: expected a torch.Tensor, got {type(img).__name__}")
    if not img.is_floating_point():
        raise TypeError(f"img: expected a floating tensor, got {img.dtype}")
    if not (img.ndim == 4 and img.shape[1] == 3):
        raise ValueError(f"img: Input image must have shape [N, 3, H, W]. Got input with shape {tuple(img.shape)}.")
    if img.numel() and normalize and not (float(img.min()) >= 0.0 and float(img.max()) <= 1.0):
        raise ValueError(
            "img: Input image values must be in the [0, 1] range when normalize==True. "
            f"Got input with values in range {img.min()} and {img.max()}."
        )
    return img


def _features(encoder: nn.Module, img: Tensor) -> Tensor:
    feats = encoder(img)
    return l2_normalize(feats.flatten(1), dim=1)  # (not reshape(N, -1): ambiguous for an empty batch)


def arniqa_scores(
    img: Tensor, encoder: nn.Module, regressor: nn.Module, regressor_dataset: str, normalize: bool, autocast: bool
) -> Tensor:
    """[N] scores of the images (module docstring), in ``img``'s dtype."""
    img = _check_images(img, normalize)
    h, w = img.shape[-2:]
    half = interpolate(img, size=(h // 2, w // 2), mode="bilinear", align_corners=False, antialias=True)
    if normalize:
        mean = torch.tensor(_MEAN, dtype=img.dtype, device=img.device).reshape(1, 3, 1, 1)
        std = torch.tensor(_STD, dtype=img.dtype, device=img.device).reshape(1, 3, 1, 1)
        img, half = (img - mean) / std, (half - mean) / std
    if autocast:
        with torch.autocast(device_type=img.device.type, dtype=img.dtype):
            score = regressor(torch.cat([_features(encoder, img), _features(encoder, half)], dim=1))
    else:
        score = regressor(torch.cat([_features(encoder, img), _features(encoder, half)], dim=1))
    low, high = DATASET_RANGES[regressor_dataset]
    return ((score - low) / (high - low)).reshape(img.shape[0])


def arniqa(
    img: Tensor,
    regressor_dataset: str = "koniq10k",
    reduction: str = "mean",
    normalize: bool = True,
    autocast: bool = False,
    *,
    encoder: Optional[nn.Module] = None,
    regressor: Optional[nn.Module] = None,
) -> Tensor:
    """ARNIQA of images ``img`` [N, 3, H, W] (in [0, 1] when ``normalize``), from the user's
    ``encoder`` and ``regressor`` (module docstring; a ValueError says what to pass when they
    are missing): ``reduction`` "mean" (default), "sum" or "none" (one score per image).

        >>> import torch
        >>> from torchtally.functional.image import arniqa
        >>> _ = torch.manual_seed(0)
        >>> encoder = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3), torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten())
        >>> regressor = torch.nn.Linear(16, 1)
        >>> arniqa(torch.rand(4, 3, 16, 16), encoder=encoder, regressor=regressor, reduction="none").shape
        torch.Size([4])
    """
    check_arniqa_args(regressor_dataset, reduction, normalize)
    encoder, regressor = check_arniqa_models(encoder, regressor)
    scores = arniqa_scores(img, encoder, regressor, regressor_dataset, normalize, autocast)
    if reduction == "none":
        return scores
    return scores.sum() / scores.shape[0] if reduction == "mean" else scores.sum()
