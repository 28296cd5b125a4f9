"""Poisson(1) resampling weights from a counter-based hash: the weight of a sample in bootstrap
copy b is a function of (seed, stream, the sample's position, b) only, never of a random
generator's state, so the same sample gets the same weight whichever rank, batch or order it
comes in.

The hash is SplitMix64's finaliser (Steele, Lea and Flood, 2014) applied in a chain to the seed,
the stream, the position and the copy index; its top 53 bits give a uniform u in [0, 1), and the
weight is the smallest k with P(Poisson(1) <= k) > u (inverse transform). int64 arithmetic in
torch wraps around like the uint64 arithmetic of the original; right shifts are made logical by
masking.
"""

import math

import torch

_GOLDEN = 0x9E3779B97F4A7C15
_MIX1 = 0xBF58476D1CE4E5B9
_MIX2 = 0x94D049BB133111EB


def _signed(value: int) -> int:
    """A uint64 constant as the int64 with the same bits."""
    return value - (1 << 64) if value >= 1 << 63 else value


def _shift_right(x: torch.Tensor, bits: int) -> torch.Tensor:
    """Logical right shift of int64 bit patterns."""
    return (x >> bits) & ((1 << (64 - bits)) - 1)


def _mix(x: torch.Tensor) -> torch.Tensor:
    z = x + _signed(_GOLDEN)
    z = (z ^ _shift_right(z, 30)) * _signed(_MIX1)
    z = (z ^ _shift_right(z, 27)) * _signed(_MIX2)
    return z ^ _shift_right(z, 31)


def _poisson1_cdf() -> torch.Tensor:
    """P(Poisson(1) <= k) for k = 0, 1, ... until it rounds to 1 in float64."""
    cdf, term, total = [], math.exp(-1.0), 0.0
    k = 0
    while total < 1.0 and k < 40:
        total += term
        cdf.append(total)
        k += 1
        term /= k
    return torch.tensor(cdf, dtype=torch.float64)


_CDF = _poisson1_cdf()


def poisson_weights(seed: int, stream: int, positions: torch.Tensor, copies: int) -> torch.Tensor:
    """int64 weights ``[copies, len(positions)]``: sample ``positions[i]``'s Poisson(1) count in each
    bootstrap copy, a function of (seed, stream, position, copy) only."""
    positions = positions.to(torch.int64)
    base = _mix(_mix(torch.tensor(_signed(seed & ((1 << 64) - 1)), dtype=torch.int64)) ^ stream)
    per_sample = _mix(base.to(positions.device) ^ positions)
    copy_index = torch.arange(copies, dtype=torch.int64, device=positions.device)
    h = _mix(per_sample.unsqueeze(0) ^ _mix(copy_index + 0x5BD1E995).unsqueeze(1))
    u = _shift_right(h, 11).to(torch.float64) * (2.0**-53)
    cdf = _CDF.to(positions.device)
    return torch.searchsorted(cdf, u, right=True).clamp_max(len(cdf) - 1)
