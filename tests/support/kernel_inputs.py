"""Shared makers and checks for the C-core tests (tests/csrc, and the CUDA module's tests in
tests/kernels and tests/cuda): the kernel modules under test, dtypes, memory layouts, numpy
views, starting states and bit-identical comparison."""

import numpy as np
import pytest
import torch

from torchtally.kernels import reference as _reference

try:
    from torchtally import _C
except ImportError:  # reported by kernels("c") as a failure, never as a skip
    _C = None

IMPLS = ("c", "reference")
LABEL_DTYPES = (torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64)
SCORE_DTYPES = (torch.float16, torch.bfloat16, torch.float32, torch.float64)
LAYOUTS = ("contiguous", "sliced", "transposed")
# Beyond one chunk of the C core's sample walk (1024), so chunk edges and the undo walk are hit.
N = 2500


def kernels(name: str):
    if name == "reference":
        return _reference
    if _C is None:
        pytest.fail("torchtally._C is not built; run `make build` (C-core tests never skip)")
    return _C


def dtype_id(dtype: torch.dtype) -> str:
    return str(dtype).replace("torch.", "")


def generator(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def labels(shape, high: int, dtype: torch.dtype, g: torch.Generator) -> torch.Tensor:
    """Random labels in [0, high) (high is capped at 2 for bool)."""
    if dtype == torch.bool:
        high = min(high, 2)
    return torch.randint(0, high, shape, generator=g).to(dtype)


def scores(shape, dtype: torch.dtype, g: torch.Generator, ties: bool = False) -> torch.Tensor:
    """Gaussian scores, or (ties) values from {-1, -0.5, -0, 0, 0.5, 1, +-inf}: many exact ties."""
    if not ties:
        return torch.randn(shape, generator=g, dtype=torch.float64).to(dtype)
    table = torch.tensor([-1.0, -0.5, -0.0, 0.0, 0.5, 1.0, float("inf"), -float("inf")], dtype=torch.float64)
    pick = torch.randint(0, 6, shape, generator=g)
    rare = torch.rand(shape, generator=g) < 0.02  # a few infinities
    pick = torch.where(rare, 6 + torch.randint(0, 2, shape, generator=g), pick)
    return table[pick].to(dtype)


def layout(t: torch.Tensor, kind: str) -> torch.Tensor:
    """The same values as `t` in another memory layout: contiguous, sliced (offset + stride > 1)
    or transposed (column-major; for a vector, a column of a matrix)."""
    if kind == "contiguous":
        return t.contiguous()
    if kind == "sliced":
        if t.dim() == 1:
            big = torch.zeros(2 * t.shape[0] + 3, dtype=t.dtype)
            big[3::2] = t
            return big[3::2]
        big = torch.zeros(2 * t.shape[0] + 1, 3 * t.shape[1] + 2, dtype=t.dtype)
        big[1::2, 2::3] = t
        return big[1::2, 2::3]
    if kind == "transposed":
        if t.dim() == 1:
            return torch.stack([torch.zeros_like(t), t, torch.zeros_like(t)], dim=1)[:, 1]
        return t.t().contiguous().t()
    raise AssertionError(kind)


def np_values(t: torch.Tensor) -> np.ndarray:
    """float16/bfloat16 -> float32 (exact), labels -> int64, others as they are."""
    if t.dtype in (torch.float16, torch.bfloat16):
        return t.float().numpy()
    if not t.is_floating_point():
        return t.long().numpy()
    return t.numpy()


def start_counts(shape, g: torch.Generator) -> torch.Tensor:
    """A non-zero int64 `out`: kernels must add to it, not overwrite it."""
    return torch.randint(0, 50, shape, generator=g)


def empty_moments(d: int) -> torch.Tensor:
    row = [0.0, 0.0, 0.0, 0.0, float("inf"), -float("inf")]
    return torch.tensor([row] * d, dtype=torch.float64)


def same_bits(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Bit-identical (also for inf / NaN / -0.0 in float64 states)."""
    if a.dtype == torch.float64:
        return torch.equal(a.view(torch.int64), b.view(torch.int64))
    return torch.equal(a, b)
