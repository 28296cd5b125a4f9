"""Sliding windows over images, in float64: the Gaussian-weighted local statistics of the
Universal Image Quality Index (UQI) map and the uniform filter of the sliding-window RMSE, RASE
and the spatial distortion index, each with torchmetrics' padding, plus the input checks these
metrics share. Every function here works on one batch; each image's values depend on that image
alone, so per-image results can be summed across batches and ranks."""

from typing import Optional, Sequence, Tuple

import torch
import torch.nn.functional as F
from torch import Tensor

from ...kernels.image import ssim as image_ssim
from .pixel_inputs import FLOATS

__all__ = [
    "check_image_batch",
    "check_pair",
    "check_window_size",
    "check_kernel",
    "check_reduction",
    "uqi_maps",
    "uniform_filter",
    "uniform_filters",
    "separable_filter",
    "box_mean",
    "window_sums",
    "half_window",
    "image_means",
    "correlate",
]

_F64 = torch.float64


def check_image_batch(name: str, x: object, dims: Tuple[int, ...] = (4,), note: Optional[str] = None) -> Tensor:
    """``x`` is a floating-point tensor with one of ``dims`` dimensions. ``note``: torchmetrics'
    words for a wrong shape, added in brackets (code matching its messages still matches)."""
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}: expected a tensor, got {type(x).__name__}")
    if x.dtype not in FLOATS:
        raise TypeError(
            f"{name}: expected a floating point tensor (float16, bfloat16, float32 or float64), got {x.dtype}"
        )
    if x.is_meta:
        raise ValueError(f"{name}: expected a tensor holding values, got a meta tensor")
    if x.dim() not in dims:
        want = " or ".join(("[N, C, H, W]" if d == 4 else "[N, H, W]") for d in dims)
        if note is None and dims == (4,):
            note = f"Expected `{name}` to have BxCxHxW shape"
        words = f" ({note})" if note else ""
        raise ValueError(
            f"{name}: expected {want} images ({'/'.join(map(str, dims))} dims), got {list(x.shape)}{words}"
        )
    return x


def check_pair(preds: object, target: object, same_shape: bool = True) -> Tuple[Tensor, Tensor]:
    """preds and target: [N, C, H, W] float tensors of one dtype (and one shape)."""
    shape_words = "Expected `preds` and `target` to have BxCxHxW shape"
    p = check_image_batch("preds", preds, note=shape_words)
    t = check_image_batch("target", target, note=shape_words)
    if p.dtype != t.dtype:
        raise TypeError(
            f"target: expected the dtype of preds ({p.dtype}), got {t.dtype} "
            "(Expected `preds` and `target` to have the same data type)"
        )
    if same_shape and p.shape != t.shape:
        raise ValueError(f"target: expected the shape of preds {list(p.shape)}, got {list(t.shape)}")
    return p, t


def check_window_size(window_size: object, name: str = "window_size") -> int:
    if isinstance(window_size, bool) or not isinstance(window_size, int) or window_size < 1:
        raise ValueError(f"Expected `{name}` to be a positive integer. Got {name}: {window_size!r}.")
    return window_size


def check_kernel(kernel_size: object, sigma: object) -> Tuple[Tuple[int, int], Tuple[float, float]]:
    """UQI's Gaussian window: two odd positive sizes and two positive standard deviations."""
    length_words = "(Expected `kernel_size` and `sigma` to have the length of two)"
    if not isinstance(kernel_size, Sequence) or len(kernel_size) != 2:
        raise ValueError(
            f"kernel_size: expected a sequence of 2 odd positive integers, got {kernel_size!r} {length_words}"
        )
    if not isinstance(sigma, Sequence) or len(sigma) != 2:
        raise ValueError(f"sigma: expected a sequence of 2 positive numbers, got {sigma!r} {length_words}")
    if any(isinstance(k, bool) or not isinstance(k, int) or k <= 0 or k % 2 == 0 for k in kernel_size):
        raise ValueError(
            f"kernel_size: expected odd positive integers, got {tuple(kernel_size)} "
            "(Expected `kernel_size` to have odd positive number)"
        )
    if any(isinstance(s, bool) or not isinstance(s, (int, float)) or not s > 0 for s in sigma):
        raise ValueError(
            f"sigma: expected positive numbers, got {tuple(sigma)} (Expected `sigma` to have positive number)"
        )
    return (kernel_size[0], kernel_size[1]), (float(sigma[0]), float(sigma[1]))


def check_reduction(reduction: Optional[str], allowed: Tuple[Optional[str], ...]) -> str:
    """``reduction`` as one of ``allowed`` ("none" for None)."""
    if reduction not in allowed:
        raise ValueError(f"reduction: expected one of {allowed}, got {reduction!r}")
    return "none" if reduction is None else reduction


# Up to this many pixels along an axis, a filter along it is one product with a band matrix
# (BLAS; O(n) per output, fast for small images and free of conv2d's slow float64 CPU path);
# beyond it, a 1-D convolution (O(k) per output).
_BAND_MAX = 64


def _band(n: int, weights: Tensor) -> Tensor:
    """The [n - k + 1, n] matrix whose row i holds ``weights`` (length k) from column i."""
    k = weights.numel()
    band = torch.zeros(n - k + 1, n, dtype=weights.dtype, device=weights.device)
    for offset in range(k):
        band.diagonal(offset).fill_(weights[offset])
    return band


def _conv(x: Tensor, kernel: Tensor) -> Tensor:
    """The valid correlation of x [..., H, W] with a 2-D kernel, by conv2d."""
    flat = x.reshape(-1, 1, x.shape[-2], x.shape[-1])
    out = F.conv2d(flat, kernel[None, None].to(x.dtype))
    return out.reshape(*x.shape[:-2], out.shape[-2], out.shape[-1])


def _along_h(x: Tensor, weights: Tensor) -> Tensor:
    if x.shape[-2] <= _BAND_MAX:
        return _band(x.shape[-2], weights) @ x
    return _conv(x, weights[:, None])


def _along_w(x: Tensor, weights: Tensor) -> Tensor:
    if x.shape[-1] <= _BAND_MAX:
        return x @ _band(x.shape[-1], weights).T
    return _conv(x, weights[None, :])


def separable_filter(x: Tensor, weights_h: Tensor, weights_w: Tensor) -> Tensor:
    """The valid correlation of x [..., H, W] with the window outer(weights_h, weights_w):
    [..., H - kh + 1, W - kw + 1], one pass per axis."""
    return _along_w(_along_h(x, weights_h), weights_w)


def window_sums(x: Tensor, window_size: int, dim: int) -> Tensor:
    """The sums of ``window_size`` consecutive values along ``dim`` (the valid ones: n - w + 1),
    by doubling: sums of 2, 4, 8... values, each from two of the previous, and the result from
    those the binary digits of w pick: about 2 log2(w) additions of whole arrays, where a
    convolution makes w multiply-adds per output (and float64 conv2d on the CPU has no fast path)."""
    out_len = x.shape[dim] - window_size + 1
    result: Optional[Tensor] = None
    block, size, offset = x, 1, 0  # block[i] = the sum of x[i : i + size] along dim
    while True:
        if window_size & size:
            part = block.narrow(dim, offset, out_len)
            result = part if result is None else result + part
            offset += size
        if 2 * size > window_size:
            break
        kept = block.shape[dim] - size
        block = block.narrow(dim, 0, kept) + block.narrow(dim, size, kept)
        size *= 2
    assert result is not None
    return result


def box_mean(x: Tensor, window_size: int) -> Tensor:
    """The valid mean over window_size x window_size windows of x [..., H, W]."""
    if max(x.shape[-2:]) > _BAND_MAX:  # beyond the band products' sizes: sums by doubling
        return window_sums(window_sums(x, window_size, -2), window_size, -1) * (1.0 / window_size**2)
    ones = torch.ones(window_size, dtype=x.dtype, device=x.device)
    return separable_filter(x, ones, ones) * (1.0 / window_size**2)


def correlate(x: Tensor, kernel: Tensor) -> Tensor:
    """The valid correlation of x [..., H, W] with a small 2-D kernel [kh, kw] (any kernel)."""
    if x.shape[-1] > _BAND_MAX:
        return _conv(x, kernel)
    kh = kernel.shape[0]
    height = x.shape[-2] - kh + 1
    out = _along_w(x[..., 0:height, :], kernel[0])
    for a in range(1, kh):
        out = out + _along_w(x[..., a : a + height, :], kernel[a])
    return out


def _gaussian_1d(size: int, sigma: float, device: torch.device) -> Tensor:
    offsets = torch.arange(size, dtype=_F64, device=device) - (size - 1) / 2
    weights = torch.exp(-0.5 * (offsets / sigma) ** 2)
    return weights / weights.sum()


def _uqi_rows(size: int, pad_mine: int, pad_other: int) -> Tuple[int, int, int]:
    """Along one axis of a UQI map: (first source index, source length, reflect padding) for the
    moments kernel. torchmetrics pads this axis by ``pad_other``, slides a window of
    2 ``pad_mine`` + 1 and crops ``pad_mine`` from each end of the result; a reflect padding by p
    then cut by q <= p equals a padding by p - q, and a crop past the padding is a slice of the
    source, so only the kept positions are computed."""
    if pad_other >= pad_mine:
        return 0, size, pad_other - pad_mine
    cut = pad_mine - pad_other
    return cut, size - 2 * cut, 0


def _kept(full: int, pad: int) -> int:
    """Length of ``range(full)[pad:-pad]`` (0 for pad 0: torchmetrics' crop keeps nothing)."""
    return max(0, full - 2 * pad) if pad > 0 else 0


def uqi_maps(
    preds: Tensor, target: Tensor, kernel_size: Tuple[int, int], sigma: Tuple[float, float], eps: float
) -> Tensor:
    """The UQI map of each image pair, float64 [N, C, H', W'] (torchmetrics' layout: the image is
    reflect-padded by (k0 - 1) / 2 on the width and (k1 - 1) / 2 on the height, the Gaussian
    window slides over it, and (k0 - 1) / 2 rows and (k1 - 1) / 2 columns are cut from each side;
    for a square window, the map of every fully covered position). ``eps`` (the input dtype's
    machine epsilon, as torchmetrics) keeps the denominator off zero. The windowed moments come
    from the ssim_moments kernel (float64), over the kept positions only."""
    pad_a, pad_b = (kernel_size[0] - 1) // 2, (kernel_size[1] - 1) // 2
    n, c, height, width = preds.shape
    if pad_a >= width or pad_b >= height:
        raise ValueError(
            f"preds: images of {height}x{width} are too small for kernel_size {kernel_size} "
            f"(reflect padding needs height > {pad_b} and width > {pad_a})"
        )
    out_h = _kept(height + 2 * pad_b - kernel_size[0] + 1, pad_a)
    out_w = _kept(width + 2 * pad_a - kernel_size[1] + 1, pad_b)
    if out_h == 0 or out_w == 0 or n * c == 0:
        return torch.zeros(n, c, out_h, out_w, dtype=_F64, device=preds.device)
    row0, rows, pad_h = _uqi_rows(height, pad_a, pad_b)
    col0, cols, pad_w = _uqi_rows(width, pad_b, pad_a)
    g0 = _gaussian_1d(kernel_size[0], sigma[0], preds.device)
    g1 = _gaussian_1d(kernel_size[1], sigma[1], preds.device)
    planes = n * c
    if preds.dtype != target.dtype:  # (the kernel widens both to float64 anyway)
        preds, target = preds.to(_F64), target.to(_F64)
    p = preds.detach().reshape(planes, height, width)[:, row0 : row0 + rows, col0 : col0 + cols]
    t = target.detach().reshape(planes, height, width)[:, row0 : row0 + rows, col0 : col0 + cols]
    maps = torch.empty(planes, out_h, out_w, dtype=_F64, device=preds.device)
    step = max(1, _UQI_CHUNK // (out_h * out_w))  # planes per chunk: the moments stay in cache
    for lo in range(0, planes, step):
        hi = min(planes, lo + step)
        stats = torch.empty(5, hi - lo, out_h, out_w, dtype=_F64, device=preds.device)
        image_ssim.ssim_moments(stats, p[lo:hi], t[lo:hi], g0, g1, pad_h, pad_w)
        _uqi_from_moments(maps[lo:hi], stats, eps)
    return maps.reshape(n, c, out_h, out_w)


_UQI_CHUNK = 1 << 15  # map values whose five moments (8 bytes each) are formed at once


def _uqi_from_moments(out: Tensor, stats: Tensor, eps: float) -> None:
    """out = 4 mu_p mu_t cov / ((mu_p^2 + mu_t^2)(var_p + var_t) + eps), each variance clamped
    at 0, from the windowed means of p, t, p^2, t^2, p t (in place: the moments are consumed)."""
    mean_p, mean_t, mean_pp, mean_tt, mean_pt = stats.unbind(0)
    both = mean_p * mean_t
    cov = mean_pt.sub_(both)
    squares = mean_p.square_()
    mean_t.square_()
    var_p = mean_pp.sub_(squares).clamp_(min=0.0)
    var_t = mean_tt.sub_(mean_t).clamp_(min=0.0)
    lower = squares.add_(mean_t).mul_(var_p.add_(var_t)).add_(eps)
    torch.mul(both, cov, out=out)
    out.mul_(4.0).div_(lower)


def half_window(window_size: int) -> int:
    """torchmetrics' crop of the sliding-window maps: Python's round(window_size / 2)."""
    return round(window_size / 2)


def _mirror_index(n: int, before: int, after: int, device: torch.device) -> Tensor:
    """Rows of a length-n axis padded by mirroring with the edge repeated (scipy's "reflect"):
    ``before`` rows in front, ``after`` behind."""
    head = torch.arange(before - 1, -1, -1, device=device)
    tail = torch.arange(n - 1, n - 1 - after, -1, device=device)
    return torch.cat((head, torch.arange(n, device=device), tail))


def uniform_filters(x: Tensor, y: Tensor, window_size: int) -> Tuple[Tensor, Tensor]:
    """The mean over a window_size x window_size window at every pixel of x and of y (one shape
    [N, C, H, W]), float64, same size as the inputs: window_size // 2 mirrored rows in front and
    the rest behind (torchmetrics' layout). Both from one pass of the windowed-moments kernel
    over the mirrored planes (its first two moments; float64 convolutions are slow on the CPU)."""
    before = window_size // 2
    after = window_size - 1 - before
    height, width = x.shape[-2:]
    if max(before, after) > min(height, width):
        raise ValueError(f"window_size: {window_size} is too large for images of {height}x{width}")
    rows = _mirror_index(height, before, after, x.device)
    cols = _mirror_index(width, before, after, x.device)
    planes = [t.detach().to(_F64).index_select(2, rows).index_select(3, cols) for t in (x, y)]
    flat = [t.reshape(-1, height + window_size - 1, width + window_size - 1) for t in planes]
    out = torch.empty(5, flat[0].shape[0], height, width, dtype=_F64, device=x.device)
    if out.numel():
        weights = torch.full((window_size,), 1.0 / window_size, dtype=_F64, device=x.device)
        image_ssim.ssim_moments(out, flat[0], flat[1], weights, weights, 0, 0)
    return out[0].reshape(x.shape), out[1].reshape(y.shape)


def uniform_filter(x: Tensor, window_size: int) -> Tensor:
    """The mean over a window_size x window_size window at every pixel, float64, same size as
    ``x`` [N, C, H, W]: window_size // 2 mirrored rows in front and the rest behind (torchmetrics'
    layout). For one image stack, separable torch filters cost less than the moments kernel's
    five planes (``uniform_filters`` takes the kernel for two stacks)."""
    before = window_size // 2
    after = window_size - 1 - before
    height, width = x.shape[-2:]
    if max(before, after) > min(height, width):
        raise ValueError(f"window_size: {window_size} is too large for images of {height}x{width}")
    x = x.detach().to(_F64)
    x = x.index_select(2, _mirror_index(height, before, after, x.device))
    x = x.index_select(3, _mirror_index(width, before, after, x.device))
    return box_mean(x, window_size)


def image_means(x: Tensor) -> Tensor:
    """The mean of each image's values [N, ...] -> [N] (NaN for an empty map)."""
    return x.reshape(x.shape[0], -1).mean(1) if x.shape[0] else x.new_zeros(0)
