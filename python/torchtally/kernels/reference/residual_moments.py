"""Torch reference of the residual-moments kernel (csrc/API_REGRESSION.md, "residual_moments").

Merges the moments (n, sum, mean, m2, min, max) of the residual ``y - x`` (rows 0..D-1) and of
``y`` (rows D..2D-1) of a batch of preds x and target y (floating [N] or [N, D], one shape) into
a float64 state [2D, 6]: a two-pass batch reduction in float64, merged with Chan's formula (the
moments reference's). A NaN or inf input raises ValueError naming the first one (x first);
every check runs before the state is written.
"""

from typing import Tuple

import torch

from . import checks as chk
from .moments import batch_moments, merge_moments

_F64 = torch.float64


def pair_inputs(x: object, y: object) -> Tuple[torch.Tensor, torch.Tensor]:
    """x and y checked: floating tensors [N] or [N, D] of one shape, on one device."""
    chk.no_meta(("x", x), ("y", y))
    x, y = chk.tensor("x", x), chk.tensor("y", y)
    for name, t in (("x", x), ("y", y)):
        if t.dtype not in chk.SCORE_DTYPES:
            raise TypeError(
                f"{name}: expected a floating tensor (float16, bfloat16, float32, float64), got {chk.describe(t)}"
            )
        if t.dim() not in (1, 2):
            raise ValueError(f"{name}: expected values [N] or [N, D], got {chk.describe(t)}")
    if y.shape != x.shape:
        raise ValueError(f"y: expected the shape of x ({chk.describe(x)}), got {chk.describe(y)}")
    if y.device != x.device:
        raise ValueError(f"y: expected a tensor on {x.device} (the device of x), got {y.device}")
    return x, y


def first_not_finite(x, y) -> None:
    """ValueError naming the first NaN or inf of x, then of y (flat row-major index)."""
    for name, t in (("x", x), ("y", y)):
        bad = ~torch.isfinite(t.reshape(-1))
        if bool(bad.any()):
            i = int(bad.nonzero()[0, 0])
            raise ValueError(f"{name}: expected finite values, got {float(t.reshape(-1)[i]):g} at flat index {i}")


def residual_moments(state, x, y, /) -> None:
    """Merge the moments of y - x and of y, per column, into state [2D, 6]."""
    x, y = pair_inputs(x, y)
    d = x.shape[1] if x.dim() == 2 else 1
    expected = f"a float64 tensor of shape [{2 * d}, 6] (2 rows per column of x)"
    state = chk.output("state", state, _F64, expected, (2,))
    if tuple(state.shape) != (2 * d, 6):
        chk.fail("state", state, expected, True)
    chk.same_device("x", x, state)
    x64, y64 = x.to(_F64).reshape(-1, d), y.to(_F64).reshape(-1, d)
    residual = y64 - x64
    if not bool(torch.isfinite(residual.sum() + y64.sum())):
        first_not_finite(x, y)  # (finite inputs whose sum overflowed pass)
    if x64.shape[0] == 0:
        return
    batch = torch.cat((batch_moments(residual, None), batch_moments(y64, None)))
    state.copy_(merge_moments(state, batch))
