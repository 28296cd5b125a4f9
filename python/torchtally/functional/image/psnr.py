"""Peak signal-to-noise ratio, plain and with the blocking-effect factor (PSNR-B), as
torchmetrics.functional.image computes them, with float64 accumulation.

PSNR of a set of values: 10 / log(base) * (2 log(data_range) - log(MSE)), here in natural logs
and scaled at the end. With ``dim``, one PSNR per slice left after summing the squared errors
over ``dim``, then reduced (mean, sum, or kept).
"""

import math
import warnings
from typing import Optional, Sequence, Tuple, Union

import torch
from torch import Tensor

from ...kernels import detached, host_module
from ...kernels.image import squared_error as image_squared_error
from ...kernels.ops import compiling
from ...kernels.regression import SQUARED
from .pixel_inputs import (
    F64,
    FLOATS,
    check_positive,
    check_reduction,
    float_dtype,
    four_dims,
    reduce_scores,
    refuse_non_finite,
    same_shape,
    tensor_of,
)

__all__ = ["peak_signal_noise_ratio"]

Bounds = Optional[Tuple[float, float]]
DataRange = Union[float, Tuple[float, float], None]
Dim = Optional[Union[int, Sequence[int]]]


# -- options ----------------------------------------------------------------------------------


def check_data_range(data_range: object, allow_none: bool) -> Tuple[Optional[float], Bounds]:
    """(the range's width, the clamping bounds or None). A number > 0, or a tuple (min, max)
    with min < max; None (width taken from the targets) where ``allow_none``."""
    if data_range is None and allow_none:
        return None, None
    if isinstance(data_range, tuple):
        ok = len(data_range) == 2 and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in data_range)
        if ok and math.isfinite(data_range[0]) and math.isfinite(data_range[1]) and data_range[0] < data_range[1]:
            return float(data_range[1] - data_range[0]), (data_range[0], data_range[1])
        raise ValueError(
            f"data_range: expected a tuple (min, max) of finite numbers with min < max, got {data_range!r}"
        )
    if isinstance(data_range, bool) or not isinstance(data_range, (int, float)):
        raise TypeError(f"data_range: expected a number or a tuple (min, max), got {type(data_range).__name__}")
    return check_positive("data_range", data_range), None


def check_base(base: object) -> float:
    value = check_positive("base", base)
    if value == 1.0:
        raise ValueError("base: expected a logarithm base other than 1, got 1")
    return value


def check_dim(dim: object) -> Optional[Tuple[int, ...]]:
    if dim is None:
        return None
    dims = (dim,) if isinstance(dim, int) else tuple(dim) if isinstance(dim, Sequence) else None
    if dims is None or any(isinstance(d, bool) or not isinstance(d, int) for d in dims):
        raise TypeError(f"dim: expected an int, a sequence of ints or None, got {dim!r}")
    return dims


def check_options(data_range: object, base: object, reduction: object, dim: object) -> tuple:
    width, bounds = check_data_range(data_range, allow_none=True)
    dims = check_dim(dim)
    if width is None and dims is not None:
        raise ValueError("data_range: expected a value when dim is given (the range is not taken from the data then)")
    reduction = check_reduction(reduction)
    if dims is None and reduction != "elementwise_mean":
        warnings.warn(
            f"The `reduction={reduction}` will not have any effect when `dim` is None "
            "(one PSNR over all the values is computed).",
            UserWarning,
            stacklevel=3,
        )
    return width, bounds, check_base(base), reduction, dims


# -- update -----------------------------------------------------------------------------------


def pair64(preds: object, target: object, bounds: Bounds) -> Tuple[Tensor, Tensor]:
    """Checked preds and target as float64, clamped to ``bounds`` (floats in their own dtype
    first, as torchmetrics clamps them)."""
    p, t = tensor_of("preds", preds), tensor_of("target", target)
    same_shape(p, t)
    if bounds is not None:
        lo, hi = bounds
        p = p.clamp(lo, hi) if p.is_floating_point() else p.to(F64).clamp(lo, hi)
        t = t.clamp(lo, hi) if t.is_floating_point() else t.to(F64).clamp(lo, hi)
    return p.to(F64), t.to(F64)


def squared_error_added(sse: Tensor, count: Tensor, preds: object, target: object) -> bool:
    """Whether the squared errors of ``preds`` and ``target`` were added into the float64 state
    ``sse`` and ``count`` += their number, in place, by the error-sums kernel: one pass that
    also gives the finiteness verdict, and writes nothing when it refuses the batch. Only for
    CPU float inputs of one dtype and neither clamped nor ranged (a fixed ``data_range``);
    False otherwise, or when the kernel refused the batch: then squared_error_and_range's path
    runs and raises naming ``preds`` / ``target``, with the states unchanged."""
    if not (isinstance(preds, Tensor) and isinstance(target, Tensor)) or compiling():
        return False
    if not (preds.is_cpu and preds.dtype == target.dtype and preds.dtype in FLOATS and preds.shape == target.shape):
        return False
    try:
        x, y = detached(preds).reshape(-1), detached(target).reshape(-1)
        host_module(preds).error_sums(sse, count, None, x, y, SQUARED, 0.0)
    except (TypeError, ValueError):
        return False
    return True


def squared_error_and_range(preds: object, target: object, bounds: Bounds) -> Tuple[Tensor, int]:
    """Checked preds and target, clamped to ``bounds`` (as ``pair64`` does): float64 [3] (sum of
    squared errors, min target, max target; +inf and -inf for no values) and the values' count.
    Floating inputs of one dtype go through the squared-error kernel: one pass, no float64 copy."""
    p, t = tensor_of("preds", preds), tensor_of("target", target)
    same_shape(p, t)
    out = torch.empty(3, dtype=F64, device=t.device)
    if p.dtype == t.dtype and p.dtype in FLOATS:
        # torchmetrics clamps in the inputs' dtype: the bounds rounded to it clamp the same.
        limits = None if bounds is None else torch.tensor(bounds, dtype=p.dtype, device=p.device).to(F64)
        image_squared_error.squared_error(out, p.reshape(-1), t.reshape(-1), limits)
        if t.numel():
            refuse_non_finite(out, preds=p, target=t)
        return out, t.numel()
    p64, t64 = pair64(p, t, bounds)
    empty = t64.numel() == 0
    least = t64.new_tensor(float("inf")) if empty else t64.min()
    most = t64.new_tensor(float("-inf")) if empty else t64.max()
    out.copy_(torch.stack((squared_error_sum(p64, t64), least, most)))
    if not empty:
        refuse_non_finite(out, preds=p64, target=t64)
    return out, t.numel()


def normalised_dims(dims: Tuple[int, ...], ndim: int) -> Tuple[int, ...]:
    out = []
    for d in dims:
        if not -ndim <= d < max(ndim, 1):
            raise ValueError(f"dim: expected dims in [{-ndim}, {ndim}) for a {ndim}-d input, got {d}")
        out.append(d % max(ndim, 1))
    if len(set(out)) != len(out):
        raise ValueError(f"dim: expected distinct dims, got {dims}")
    return tuple(out)


def slice_log_psnr(p: Tensor, t: Tensor, dims: Tuple[int, ...], width: float) -> Tensor:
    """PSNR in natural-log units of every slice left after reducing ``dims`` (all dims when
    empty), float64, in the shape those slices leave."""
    dims = normalised_dims(dims, p.dim())
    sse = (p - t).square().sum(dim=dims) if dims else (p - t).square().sum()
    count = math.prod(p.shape[d] for d in dims) if dims else p.numel()
    refuse_non_finite(sse, preds=p, target=t)
    return 2.0 * math.log(width) - torch.log(sse / count)


def squared_error_sum(p: Tensor, t: Tensor) -> Tensor:
    return (p - t).square().sum()


def log_psnr(sse: Tensor, count: Tensor, width: Union[float, Tensor]) -> Tensor:
    """2 log(width) - log(sse / count), float64."""
    width = torch.as_tensor(width, dtype=F64, device=sse.device)
    return 2.0 * torch.log(width) - torch.log(sse / count)


def scale(base: float) -> float:
    """Natural-log PSNR to ``base``: 10 / log(base)."""
    return 10.0 / math.log(base)


def functional_dtype(preds: Tensor, target: Tensor, zero_dim: bool) -> torch.dtype:
    """torchmetrics' result dtype: a 0-d squared-error sum meets its default-dtype data_range
    tensor (promoted); a dimensioned one keeps the inputs' dtype."""
    dtype = float_dtype(preds, target)
    return torch.promote_types(torch.get_default_dtype(), dtype) if zero_dim else dtype


def peak_signal_noise_ratio(
    preds: Tensor,
    target: Tensor,
    data_range: DataRange,
    base: float = 10.0,
    reduction: Optional[str] = "elementwise_mean",
    dim: Dim = None,
) -> Tensor:
    """PSNR of ``preds`` against ``target`` (same shape, any dims): ``10 / log10(base) *
    log10(data_range**2 / MSE)``. ``data_range``: the width of the value range, or a tuple
    (min, max) to which both inputs are clamped (width max - min); None takes it from the
    target (max - min; not with ``dim``). ``dim``: the dims to compute each PSNR over, then
    ``reduction`` ("elementwise_mean", "sum", "none"/None) of those PSNRs; None: one PSNR over
    all the values.

    Differences from torchmetrics: float64 throughout (torchmetrics sums the squared errors in
    the inputs' dtype, which overflows in float16); inputs of different shapes raise ValueError
    (torchmetrics broadcasts them and divides by the target's size); data_range=None accepted
    (torchmetrics 1.9 raises TypeError); bad data_range, base and dim, and NaN or infinite
    pixels, raise at once.

        >>> import torch
        >>> from torchtally.functional.image import peak_signal_noise_ratio
        >>> preds = torch.tensor([[0.0, 1.0], [2.0, 3.0]])
        >>> target = torch.tensor([[3.0, 2.0], [1.0, 0.0]])
        >>> peak_signal_noise_ratio(preds, target, data_range=3.0)
        tensor(2.5527)
        >>> peak_signal_noise_ratio(preds, target, data_range=3.0, reduction="none", dim=1)
        tensor([2.5527, 2.5527])
    """
    width, bounds, base, reduction, dims = check_options(data_range, base, reduction, dim)
    if dims is None:
        sums, n = squared_error_and_range(preds, target, bounds)
        if width is None:
            width = sums[2] - sums[1] if n else torch.tensor(float("nan"), dtype=F64)
        value = log_psnr(sums[0], torch.tensor(n, device=sums.device), width) * scale(base)
        return value.to(functional_dtype(preds, target, zero_dim=True))
    p, t = pair64(preds, target, bounds)
    assert width is not None
    values = slice_log_psnr(p, t, dims, width) * scale(base)
    zero_dim = not dims or len(normalised_dims(dims, p.dim())) == p.dim()
    result = reduce_scores(values, reduction)
    return result.to(functional_dtype(preds, target, zero_dim=zero_dim))


# -- PSNR-B -----------------------------------------------------------------------------------


def check_block_size(block_size: object) -> int:
    if isinstance(block_size, bool) or not isinstance(block_size, int) or block_size < 1:
        raise ValueError(f"block_size: expected a positive int, got {block_size!r}")
    return block_size


def blocking_effect(x: Tensor, block_size: int) -> Tensor:
    """The blocking-effect factor of a batch of grayscale images [N, 1, H, W] (float64): the
    mean squared step across block edges minus the one inside blocks, weighted by
    log2(block_size) / log2(min(H, W)); 0 where the edges step less."""
    _, _, height, width = x.shape
    cols = torch.arange(width - 1, device=x.device) % block_size == block_size - 1
    rows = torch.arange(height - 1, device=x.device) % block_size == block_size - 1
    across = (x[..., :, :-1] - x[..., :, 1:]).square().sum(dim=(0, 1, 2))  # [W - 1]
    down = (x[..., :-1, :] - x[..., 1:, :]).square().sum(dim=(0, 1, 3))  # [H - 1]
    edge = (across * cols).sum() + (down * rows).sum()
    inner = (across * ~cols).sum() + (down * ~rows).sum()
    n_cols = height * (width / block_size) - 1  # the counts torchmetrics divides by
    n_rows = width * (height / block_size) - 1
    edge = edge / (n_cols + n_rows)
    inner = inner / ((height * (width - 1) - n_cols) + (width * (height - 1) - n_rows))
    weight = math.log2(block_size) / math.log2(min(height, width))
    return torch.where(edge > inner, weight * (edge - inner), torch.zeros_like(edge))


def psnrb_batch(preds: object, target: object, block_size: int, bounds: Bounds) -> Tuple[Tensor, Tensor, int]:
    """(squared-error sum, blocking-effect factor of preds, number of values) of one batch."""
    p, t = pair64(preds, target, bounds)
    four_dims("preds", p, "[N, 1, H, W]")
    if p.shape[1] != 1:
        raise ValueError(
            f"preds: expected grayscale images [N, 1, H, W], got {p.shape[1]} channels "
            "(`psnrb` metric expects grayscale images)"
        )
    if p.shape[2] < 2 or p.shape[3] < 2:
        raise ValueError(f"preds: expected images of at least 2 x 2 pixels, got {p.shape[2]} x {p.shape[3]}")
    sse, bef = squared_error_sum(p, t), blocking_effect(p, block_size)
    refuse_non_finite(torch.stack((sse.double().reshape(()), bef.double().reshape(()))), preds=p, target=t)
    return sse, bef, t.numel()


def psnrb_value(sse: Tensor, bef: Tensor, count: Tensor, width: float) -> Tensor:
    """10 log10(width^2 / (sse / count + bef)), float64."""
    return 10.0 * torch.log10(width**2 / (sse / count + bef))
