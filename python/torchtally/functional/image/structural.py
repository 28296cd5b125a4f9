"""SSIM's per-image work, shared by the functional forms and the classes: argument checks, the
window (Gaussian or uniform, separable), the five windowed moments in float64 (2-D planes through
the kernel route torchtally.kernels.image.ssim, 3-D volumes by separable float64 convolutions),
and each image's SSIM and contrast-sensitivity means.

Geometry (torchmetrics 1.9's): each spatial dimension is reflect-padded by (window - 1) // 2,
the window slides over the padded image ("valid"), and the SSIM map, as large as the image, is
averaged whole; the contrast sensitivity is averaged with that padding cropped off again. In
3-D the last dimension is padded by (kernel_size[2] - 1) // 2 even for a Gaussian window (as
torchmetrics does).
"""

import math
import numbers
from typing import Any, List, NamedTuple, Optional, Sequence, Tuple, Union

import torch
import torch.nn.functional as F
from torch import Tensor

from ...kernels.image import ssim as image_ssim
from .pixel_inputs import FLOATS

DataRange = Optional[Union[float, Tuple[float, float]]]
_REDUCTIONS = ("elementwise_mean", "sum", "none", None)
_CHUNK_VALUES = 1 << 17  # pixels (times channels) of the images whose moments are formed at once


class Window(NamedTuple):
    """Per spatial dimension: the 1-D float64 weights, the reflect padding and the crop."""

    weights: Tuple[Tensor, ...]
    pads: Tuple[int, ...]


class Options(NamedTuple):
    gaussian_kernel: bool
    sigma: Union[float, Tuple[float, ...]]  # one number for every dimension, or one per dimension
    kernel_size: Union[int, Tuple[int, ...]]
    data_range: DataRange
    k1: float
    k2: float


def check_reduction(reduction: object) -> None:
    if reduction not in _REDUCTIONS:
        raise ValueError(f"reduction: expected one of {_REDUCTIONS}, got {reduction!r}")


def _numbers(name: str, value: object, kind: type) -> Any:
    """A number (kept as it is) or a sequence of numbers (as a tuple)."""
    is_sequence = isinstance(value, Sequence) and not isinstance(value, str)
    items = tuple(value) if is_sequence else (value,)  # type: ignore[arg-type]
    if not items or any(isinstance(v, bool) or not isinstance(v, kind) for v in items):
        what = "an int" if kind is int else "a number"
        raise ValueError(f"{name}: expected {what} or a sequence of 2 or 3 of them, got {value!r}")
    return items if is_sequence else items[0]


def per_dim(value: Any, spatial: int) -> Tuple:
    """`value` for each of `spatial` dimensions (a number repeated; a tuple as it is)."""
    return value if isinstance(value, tuple) else (value,) * spatial


def check_options(
    gaussian_kernel: bool, sigma: object, kernel_size: object, data_range: object, k1: object, k2: object
) -> Options:
    """Validate the SSIM options at construction (what does not depend on the input's rank)."""
    sig = _numbers("sigma", sigma, numbers.Real)
    ks = _numbers("kernel_size", kernel_size, int)
    if any(k <= 0 or k % 2 == 0 for k in per_dim(ks, 1)):
        raise ValueError(
            f"kernel_size: Expected `kernel_size` to have odd positive number (each one). Got {kernel_size!r}."
        )
    if any(not s > 0 or not math.isfinite(s) for s in per_dim(sig, 1)):
        raise ValueError(f"sigma: Expected `sigma` to have positive number (each one, finite). Got {sigma!r}.")
    if data_range is not None:
        if isinstance(data_range, tuple):
            ok = len(data_range) == 2 and all(
                isinstance(v, numbers.Real) and not isinstance(v, bool) for v in data_range
            )
            if (
                not ok
                or not (math.isfinite(data_range[0]) and math.isfinite(data_range[1]))
                or data_range[1] <= data_range[0]
            ):
                raise ValueError(
                    f"data_range: expected a tuple (min, max) of finite numbers with min < max, got {data_range!r}"
                )
            data_range = (float(data_range[0]), float(data_range[1]))
        elif isinstance(data_range, numbers.Real) and not isinstance(data_range, bool):
            if not (float(data_range) > 0 and math.isfinite(data_range)):
                raise ValueError(f"data_range: expected a positive finite number, got {data_range!r}")
            data_range = float(data_range)
        else:
            raise ValueError(f"data_range: expected a number, a tuple (min, max) or None, got {data_range!r}")
    for name, k in (("k1", k1), ("k2", k2)):
        if isinstance(k, bool) or not isinstance(k, numbers.Real) or not math.isfinite(k):
            raise ValueError(f"{name}: expected a finite number, got {k!r}")
    return Options(bool(gaussian_kernel), sig, ks, data_range, float(k1), float(k2))  # type: ignore[arg-type]


def check_images(preds: object, target: object) -> Tuple[Tensor, Tensor]:
    """preds and target: floating [N, C, H, W] or [N, C, D, H, W] of one shape; target takes
    preds' dtype (as torchmetrics casts it). NaN and infinity are caught from the scores
    (explain_nan), without a pass of their own."""
    if not isinstance(preds, Tensor) or not isinstance(target, Tensor):
        raise TypeError(f"preds, target: expected tensors, got {type(preds).__name__} and {type(target).__name__}")
    for name, t in (("preds", preds), ("target", target)):
        if t.dtype not in FLOATS:
            raise TypeError(
                f"{name}: expected a floating point tensor (float16, bfloat16, float32 or float64), got {t.dtype}"
            )
        if t.is_meta:
            raise ValueError(f"{name}: expected a tensor holding values, got a meta tensor")
    if preds.dim() not in (4, 5):
        raise ValueError(
            f"preds: Expected `preds` and `target` to have BxCxHxW or BxCxDxHxW shape. Got preds: {list(preds.shape)}"
        )
    if preds.shape != target.shape:
        raise ValueError(f"target: expected the shape of preds {list(preds.shape)}, got {list(target.shape)}")
    if target.device != preds.device:
        raise ValueError(f"target: expected a tensor on {preds.device} (the device of preds), got {target.device}")
    return preds, target.to(preds.dtype)


def explain_nan(preds: Tensor, target: Tensor, data_range: float) -> None:
    """A score came out NaN: raise ValueError saying why (a NaN or infinite input, a constant
    batch with data_range=None, or values whose squares overflow float64). Finite inputs with a
    positive range give finite scores, so only a failed batch pays for this pass."""
    for name, t in (("preds", preds), ("target", target)):
        if not bool(torch.isfinite(t).all()):
            raise ValueError(f"{name}: expected finite values, got NaN or infinity")
    if data_range == 0:
        raise ValueError(
            "data_range: None takes the batch's max - min, and preds and target are constant (0); give data_range"
        )
    raise ValueError("preds, target: expected values whose squares fit float64, got an SSIM of NaN")


def _gaussian(size: int, sigma: float, device: torch.device) -> Tensor:
    x = torch.arange(size, dtype=torch.float64, device=device) - (size - 1) / 2
    g = torch.exp(-0.5 * (x / sigma) ** 2)
    return g / g.sum()


def make_window(opts: Options, spatial: int, device: torch.device) -> Window:
    """The separable window for `spatial` (2 or 3) dimensions, with each one's padding."""
    ks, sig = per_dim(opts.kernel_size, spatial), per_dim(opts.sigma, spatial)
    for name, got in (("kernel_size", ks), ("sigma", sig)):
        if len(got) != spatial:  # torchmetrics' wording (which says kernel_size for sigma too)
            raise ValueError(
                f"{name}: `kernel_size` has dimension {len(ks) if name == 'sigma' else len(got)}, but expected to be "
                f"two less that target dimensionality, which is: {spatial + 2} ({name} has {len(got)} values)"
            )
    if opts.gaussian_kernel:
        sizes = [int(3.5 * s + 0.5) * 2 + 1 for s in sig]
        weights = tuple(_gaussian(k, s, device) for k, s in zip(sizes, sig))
    else:
        sizes = list(ks)
        weights = tuple(torch.full((k,), 1.0 / k, dtype=torch.float64, device=device) for k in sizes)
    pads = [(k - 1) // 2 for k in sizes]
    if spatial == 3:
        pads[2] = (ks[2] - 1) // 2  # torchmetrics pads the last dimension by kernel_size, not the window
    return Window(weights, tuple(pads))


def check_fits(preds: Tensor, window: Window) -> None:
    """Reflect padding needs pad < size, and the window must fit the padded image."""
    for d, (w, pad) in enumerate(zip(window.weights, window.pads)):
        size = preds.shape[2 + d]
        if pad >= size or size + 2 * pad < w.numel():
            raise ValueError(
                f"preds: spatial dimension {d} of size {size} is too small for a window of {w.numel()} "
                f"with reflect padding {pad} (needs size > {pad})"
            )


def data_range_of(preds: Tensor, target: Tensor, data_range: DataRange) -> Tuple[Tensor, Tensor, float]:
    """(preds, target, range): clamped to (min, max) when a tuple is given; the batch's larger
    max - min of preds and target when None (torchmetrics' rule)."""
    if data_range is None:
        if preds.numel() == 0:
            return preds, target, 1.0
        spread = torch.stack(((preds.max() - preds.min()).double(), (target.max() - target.min()).double()))
        return preds, target, float(spread.max())
    if isinstance(data_range, tuple):
        lo, hi = data_range
        return preds.clamp(lo, hi), target.clamp(lo, hi), hi - lo
    return preds, target, float(data_range)


def moments(preds: Tensor, target: Tensor, window: Window) -> Tensor:
    """float64 [5, N, C, *out_spatial]: the windowed means of p, t, p^2, t^2, p*t."""
    n, c = preds.shape[:2]
    if preds.dim() == 4:
        h, w = preds.shape[2:]
        (wh, ww), (ph, pw) = window.weights, window.pads
        out = torch.empty(
            5, n * c, h + 2 * ph - wh.numel() + 1, w + 2 * pw - ww.numel() + 1, dtype=torch.float64, device=preds.device
        )
        image_ssim.ssim_moments(out, preds.reshape(n * c, h, w), target.reshape(n * c, h, w), wh, ww, ph, pw)
        return out.reshape(5, n, c, *out.shape[2:])
    p, t = preds.double(), target.double()
    planes = torch.stack((p, t, p * p, t * t, p * t)).reshape(5 * n * c, 1, *preds.shape[2:])
    pads = window.pads
    planes = F.pad(planes, (pads[2], pads[2], pads[1], pads[1], pads[0], pads[0]), mode="reflect")
    for d, wt in enumerate(window.weights):
        shape = [1, 1, 1, 1, 1]
        shape[2 + d] = wt.numel()
        planes = F.conv3d(planes, wt.reshape(shape))
    return planes.reshape(5, n, c, *planes.shape[2:])


def ssim_maps(m: Tensor, data_range: float, k1: float, k2: float) -> Tuple[Tensor, Tensor]:
    """(SSIM map, contrast-sensitivity map) from the moments, float64."""
    # products, not ** 2: a huge range gives inf (and a NaN score explain_nan reports), never OverflowError
    c1, c2 = (k1 * data_range) * (k1 * data_range), (k2 * data_range) * (k2 * data_range)
    mu_p, mu_t = m[0], m[1]
    mu_pp, mu_tt, mu_pt = mu_p * mu_p, mu_t * mu_t, mu_p * mu_t
    var_p = (m[2] - mu_pp).clamp_(min=0.0)
    var_t = (m[3] - mu_tt).clamp_(min=0.0)
    upper = (m[4] - mu_pt).mul_(2.0).add_(c2)
    lower = var_p.add_(var_t).add_(c2)
    cs = upper / lower
    ssim = (mu_pt.mul_(2.0).add_(c1)).mul_(cs).div_(mu_pp.add_(mu_tt).add_(c1))
    return ssim, cs


def crop(x: Tensor, pads: Sequence[int]) -> Tensor:
    """x without `pads[d]` samples at both ends of spatial dimension d (none cropped where 0)."""
    for d, pad in enumerate(pads):
        if pad:
            x = x.narrow(2 + d, pad, x.shape[2 + d] - 2 * pad)
    return x


def per_image(
    preds: Tensor, target: Tensor, opts: Options, want_cs: bool = False, want_map: bool = False
) -> Tuple[Tensor, Optional[Tensor], Optional[Tensor]]:
    """(SSIM per image float64 [N], contrast sensitivity per image or None, SSIM map or None).
    Inputs already checked (check_images)."""
    window = make_window(opts, preds.dim() - 2, preds.device)
    check_fits(preds, window)
    preds, target, dr = data_range_of(preds, target, opts.data_range)
    n = preds.shape[0]
    per_plane = max(1, math.prod(preds.shape[2:]))  # (not preds[0, 0]: the batch may be empty)
    step = max(1, _CHUNK_VALUES // (per_plane * max(1, preds.shape[1])))  # images per chunk
    scores, cs_means, maps = [], [], []
    for lo in range(0, n, step):  # chunks small enough for the moments to stay in cache
        p, t = preds[lo : lo + step], target[lo : lo + step]
        ssim, cs = ssim_maps(moments(p, t, window), dr, opts.k1, opts.k2)
        scores.append(ssim.reshape(p.shape[0], -1).mean(-1))
        if want_cs:
            cs_means.append(crop(cs, window.pads).reshape(p.shape[0], -1).mean(-1))
        if want_map:
            maps.append(ssim)
    if not scores:
        empty = preds.new_empty(0, dtype=torch.float64)
        return empty, (empty if want_cs else None), (moments(preds, target, window)[0] if want_map else None)
    score = torch.cat(scores)
    if not bool(torch.isfinite(score).all()):
        explain_nan(preds, target, dr)
    return score, (torch.cat(cs_means) if want_cs else None), (torch.cat(maps) if want_map else None)


def reduce_scores(scores: Tensor, reduction: object) -> Tensor:
    if reduction == "elementwise_mean":
        return scores.mean()
    if reduction == "sum":
        return scores.sum()
    return scores


DEFAULT_BETAS = (0.0448, 0.2856, 0.3001, 0.2363, 0.1333)


def check_ms_options(betas: object, normalize: object) -> Tuple[float, ...]:
    if not isinstance(betas, tuple) or not betas or not all(isinstance(b, float) for b in betas):
        raise ValueError(f"betas: expected a non-empty tuple of floats, got {betas!r}")
    if normalize not in ("relu", "simple", None):
        raise ValueError(f"normalize: expected 'relu', 'simple' or None, got {normalize!r}")
    return betas


def ms_per_image(preds: Tensor, target: Tensor, opts: Options, betas: Tuple[float, ...], normalize: object) -> Tensor:
    """MS-SSIM per image, float64 [N]: the contrast sensitivity of every scale but the last and
    the SSIM of the last, each to the power of its beta, multiplied; the images halved by 2x2
    (2x2x2) average pooling between scales. Inputs already checked (check_images)."""
    spatial = preds.dim() - 2
    make_window(opts, spatial, preds.device)  # the lengths of kernel_size and sigma checked
    ks = per_dim(opts.kernel_size, spatial)
    smallest = 2 ** len(betas)
    if preds.shape[-1] < smallest or preds.shape[-2] < smallest:
        raise ValueError(
            f"preds: expected height and width of at least {smallest} for {len(betas)} betas, got {list(preds.shape)}"
        )
    div = max(1, len(betas) - 1) ** 2
    for d, name, k in ((-2, "height", ks[0]), (-1, "width", ks[1])):
        if preds.shape[d] // div <= k - 1:
            raise ValueError(
                f"preds: for {len(betas)} betas and kernel size {k}, the image {name} must be larger than "
                f"{(k - 1) * div}, got {preds.shape[d]}"
            )
    pool = F.avg_pool2d if spatial == 2 else F.avg_pool3d
    factors: List[Tensor] = []
    for scale in range(len(betas)):
        last = scale == len(betas) - 1
        sim, cs, _ = per_image(preds, target, opts, want_cs=not last)
        value = sim if last else cs
        assert value is not None
        if normalize == "relu":
            value = value.clamp(min=0.0)
        factors.append(value)
        if not last:
            preds, target = pool(preds, 2), pool(target, 2)
    stack = torch.stack(factors)
    if normalize == "simple":
        stack = (stack + 1) / 2
    exponents = torch.tensor(betas, dtype=torch.float64, device=stack.device).reshape(-1, 1)
    return stack.pow(exponents).prod(0)
