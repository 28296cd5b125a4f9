"""A result computed in float64, cast to the dtype it is returned in, never silently infinite."""

import math

import torch

__all__ = ["cast_result"]


def cast_result(value: torch.Tensor, dtype: torch.dtype, owner: str, fix: str) -> torch.Tensor:
    """``value`` in ``dtype``; ValueError naming ``owner`` and saying ``fix`` where a finite value
    would become infinite there (1e300 in float32). Infinite and NaN values pass as they are (a
    perfect prediction's PSNR is inf), and so does every value that fits: one finiteness check of
    the cast result, the rest only when it finds an inf."""
    out = value.to(dtype)
    if not out.is_floating_point() or out.dtype == value.dtype:
        return out
    if out.numel() == 1 and not out.is_meta:  # most results: one host read (a CUDA sync, as bool() is), not a tensor op
        if math.isfinite(out.item()) or not math.isfinite(value.item()):
            return out
        raise ValueError(f"{owner}: the result {value.item():g} does not fit {dtype}; {fix}")
    if not bool(torch.isfinite(out).all()):
        lost = torch.isfinite(value) & ~torch.isfinite(out)
        if bool(lost.any()):
            raise ValueError(f"{owner}: the result {float(value[lost].reshape(-1)[0]):g} does not fit {dtype}; {fix}")
    return out
