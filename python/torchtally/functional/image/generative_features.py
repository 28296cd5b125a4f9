"""Features for the generative-image metrics (FID, KID, IS, MiFID): the extractor a ``feature``
argument names, its feature count, and one batch of images through it, checked.

``feature`` is an ``nn.Module`` (any extractor mapping a batch of images to [N, D] features) or
an int / str naming an InceptionV3 layer (torchtally.functional.image.inception_net, which
needs torch-fidelity and local weights). The module is called as given (no gradient); its
output must be a floating [N, D] tensor (a 1-D output is one image) of finite values, with N
the number of images.
"""

import math
from typing import Any, List, Optional, Tuple, Union

import torch
from torch import Tensor, nn

from ...errors import SyncError
from ...kernels.image import feature_rows as image_feature_rows
from .inception_net import inception_extractor

__all__ = [
    "NO_WIDTH",
    "agreed_width",
    "check_bool",
    "check_real",
    "count_features",
    "extract_features",
    "extract_rows",
    "feature_rows",
    "resolve_extractor",
]

# The min-reduced width of a metric that has seen no image: larger than any width, so that a
# sync's min is the narrowest width of the ranks that saw images.
NO_WIDTH = torch.iinfo(torch.int64).max


def check_bool(value: Any, name: str) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"Argument `{name}` expected to be a bool")
    return value


def check_real(real: Any) -> bool:
    """``update``'s ``real`` flag: a bool (or a one-element bool tensor)."""
    if isinstance(real, Tensor) and real.numel() == 1 and real.dtype == torch.bool:
        return bool(real.item())
    if not isinstance(real, bool):
        raise TypeError(f"real: expected a bool (True for real images, False for generated), got {real!r}")
    return real


def resolve_extractor(
    metric: str, feature: Any, valid: List[Union[int, str]], weights_path: Optional[str] = None, antialias: bool = True
) -> Tuple[nn.Module, bool]:
    """(extractor, whether the user gave it) for ``feature`` (module docstring)."""
    if isinstance(feature, nn.Module):
        return feature, True
    if isinstance(feature, (int, str)) and not isinstance(feature, bool):
        return inception_extractor(metric, feature, valid, weights_path, antialias), False
    raise TypeError(f"Got unknown input to argument `feature`: expected an int, a str or an nn.Module, got {feature!r}")


def count_features(extractor: nn.Module, normalize: bool, input_img_size: Tuple[int, ...]) -> int:
    """The extractor's feature count: its ``num_features`` attribute (int or one-element
    tensor), else the width of its output for one random image of ``input_img_size`` (float in
    [0, 1) when ``normalize``, else uint8), as torchmetrics finds it."""
    declared = getattr(extractor, "num_features", None)
    if declared is not None:
        if isinstance(declared, Tensor) and declared.numel() == 1:
            declared = int(declared.item())
        if not isinstance(declared, int) or isinstance(declared, bool):
            raise TypeError("Expected `feature.num_features` to be of type int or Tensor.")
        if declared < 1:
            raise ValueError(f"`feature.num_features` must be at least 1, got {declared}")
        return declared
    if normalize:
        dummy = torch.rand(1, *input_img_size, dtype=torch.float32)
    else:
        dummy = torch.randint(0, 255, (1, *input_img_size), dtype=torch.uint8)
    with torch.no_grad():
        out = extractor(dummy)
    if not isinstance(out, Tensor) or out.dim() not in (1, 2):
        raise ValueError("feature: the extractor must return a [N, D] tensor for a batch of images")
    return int(out.shape[-1])


def extract_features(
    extractor: nn.Module, imgs: Any, to_bytes: bool, width: Optional[int], what: str = "features"
) -> Tensor:
    """``extractor(imgs)`` as a checked [N, D] floating tensor of finite values, D == ``width``
    when given.

    ``to_bytes``: turn float images in [0, 1] into uint8 first (``normalize`` with the
    built-in extractor), as ``(imgs * 255).byte()``."""
    out = _run_extractor(extractor, imgs, to_bytes, width, what)
    # NaN and infinity reach the sum (one reduction, read once); only a non-finite sum, which
    # finite values can also give by overflowing, pays for the element-wise look
    if out.numel() and not math.isfinite(float(out.sum())) and not bool(torch.isfinite(out).all()):
        raise ValueError(f"{what}: expected finite values, the extractor returned NaN or infinity")
    return out


def extract_rows(
    extractor: nn.Module, imgs: Any, to_bytes: bool, width: Optional[int], what: str = "features"
) -> Tuple[Tensor, int]:
    """(``extractor(imgs)`` as a new flat float32 block of N D values, row after row; D): the
    checks of ``extract_features``, the values finite in float32 too. The block shares no memory
    with the extractor's output (an extractor may hand back a buffer it refills, a forward
    hook's capture, say), so a state may keep it as it is. One kernel call for the copy and the
    finiteness check (kernels.image.feature_rows)."""
    out = _run_extractor(extractor, imgs, to_bytes, width, what)
    rows = torch.empty(out.numel(), dtype=torch.float32, device=out.device)
    try:
        image_feature_rows.feature_rows(rows, out)
    except ValueError as exc:  # the kernel's words name its own argument: here it is the features
        raise ValueError(f"{what}: expected finite values (in float32), the extractor returned {exc}") from None
    return rows, out.shape[1]


def _run_extractor(extractor: nn.Module, imgs: Any, to_bytes: bool, width: Optional[int], what: str) -> Tensor:
    """``extractor(imgs)`` (no gradient) as a checked [N, D] floating tensor, D == ``width``
    when given; its values are not looked at."""
    if not isinstance(imgs, Tensor):
        raise TypeError(f"imgs: expected a torch.Tensor, got {type(imgs).__name__}")
    if imgs.dim() == 0:
        raise ValueError("imgs: expected a batch of images [N, ...], got a 0-d tensor")
    if to_bytes:
        if not imgs.is_floating_point():
            raise TypeError(f"imgs: with normalize=True expected float images in [0, 1], got {imgs.dtype}")
        imgs = (imgs * 255).byte()
    # no gradient while the extractor runs (set and restored by hand: half the cost of a
    # torch.no_grad() block, on every update)
    grad = torch.is_grad_enabled()
    if grad:
        torch.set_grad_enabled(False)
    try:
        out = extractor(imgs)
    except (RuntimeError, IndexError, NotImplementedError) as exc:  # the extractor's own shape/dtype rules
        raise ValueError(
            f"imgs: the feature extractor could not read the batch ({imgs.dtype} {list(imgs.shape)}): {exc}"
        ) from exc
    finally:
        if grad:
            torch.set_grad_enabled(True)
    if not isinstance(out, Tensor):
        raise TypeError(f"{what}: the extractor must return a tensor, got {type(out).__name__}")
    if out.dim() == 1:
        out = out.unsqueeze(0)
    if out.dim() != 2:
        raise ValueError(f"{what}: the extractor must return [N, D], got shape {tuple(out.shape)}")
    if not out.is_floating_point():
        raise TypeError(f"{what}: the extractor must return floating values, got {out.dtype}")
    if out.shape[0] != imgs.shape[0]:
        raise ValueError(f"{what}: expected one row per image ({imgs.shape[0]}), got {out.shape[0]}")
    if width is not None and out.shape[1] != width:
        raise ValueError(f"{what}: expected {width} values per image, got {out.shape[1]}")
    return out.detach() if out.requires_grad else out  # (an extractor may keep grad on by itself)


def agreed_width(widest: Tensor, narrowest: Tensor, metric: str) -> int:
    """The feature width of a metric's rows after a sync or a merge: the max- and min-reduced
    widths (0 and NO_WIDTH where no image was seen) must agree; SyncError otherwise, since rows
    of different widths cut at either one are garbage. 0 when no image was seen anywhere."""
    high, low = int(widest), int(narrowest)
    if high and low != high:
        raise SyncError(
            f"{metric}: the feature rows have different widths ({low} and {high} features): the ranks' (or the "
            "merged metrics') feature extractors differ; give every rank the same `feature`"
        )
    return high


def feature_rows(flat: Tensor, width: int, name: str) -> Tensor:
    """A flat float32 ``cat`` state of features as float64 rows [N, width] (ValueError naming
    ``name`` when its length is not whole rows: states of different widths were merged)."""
    if width < 1 or flat.numel() % width:
        raise ValueError(f"'{name}': {flat.numel()} values are not whole rows of {width} features")
    return flat.to(torch.float64).reshape(-1, width)
