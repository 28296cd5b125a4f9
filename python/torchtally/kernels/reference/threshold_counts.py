"""Torch reference of the threshold-counts kernel (csrc/API_REGRESSION.md, "threshold_counts").

Adds to ``counts`` (int64 [4]) the numbers of elements of preds x and target y (float32 or
float64, [N] or [N, D], one shape) for which (neither, y only, x only, both) are at or above
``threshold``: each tensor compared with the Python number as torch compares them (in its own
dtype). A NaN or inf input raises ValueError naming the first one (x first); every check runs
before ``counts`` is written.
"""

from typing import Tuple

import torch

from . import checks as chk
from .residual_moments import first_not_finite, pair_inputs

_I64 = torch.int64


def _inputs(x: object, y: object) -> Tuple[torch.Tensor, torch.Tensor]:
    pair = pair_inputs(x, y)
    for name, t in zip(("x", "y"), pair):
        if t.dtype not in (torch.float32, torch.float64):
            raise TypeError(f"{name}: expected float32 or float64, got {chk.describe(t)}")
    return pair


def threshold_counts(counts, x, y, threshold, /) -> None:
    """counts += (neither, y only, x only, both) of the elements at or above threshold."""
    x, y = _inputs(x, y)
    threshold = chk.float_value("threshold", threshold)
    counts = chk.output("counts", counts, _I64, "an int64 tensor of shape [4]", (1,))
    if counts.shape[0] != 4:
        chk.fail("counts", counts, "an int64 tensor of shape [4]", True)
    chk.same_device("x", x, counts)
    if not bool(torch.isfinite(x.sum(dtype=torch.float64) + y.sum(dtype=torch.float64))):
        first_not_finite(x, y)
    codes = (x >= threshold).to(torch.uint8) * 2 + (y >= threshold)
    batch = torch.bincount(codes.reshape(-1), minlength=4).to(counts.device)
    total = counts + batch
    if bool((total < counts).any()):
        raise ValueError(f"counts: expected counts that fit int64 after {x.numel()} more elements")
    counts.copy_(total)
