"""Torch reference of the feature-rows kernel (csrc/API_IMAGE.md, "feature_rows").

out float32 [N * D] = x [N, D] (float16, bfloat16, float32 or float64, any strides) rounded to
float32, row after row; a value that is NaN, infinite or rounds to an infinite float32 is a
ValueError naming x with its row and column, and out is written only after every value passed.
"""

import torch

from . import checks as chk


def feature_rows(out, x, /) -> None:
    chk.no_meta(("x", x))
    out = chk.tensor("out", out)
    x = chk.scores("x", x, out, "a floating tensor [N, D]", lambda s: len(s) == 2)
    n, d = x.shape
    out = chk.output("out", out, torch.float32, f"float32 [{n * d}]", (1,))
    if out.numel() != n * d:
        raise ValueError(f"out: expected float32 [{n * d}], got {chk.describe(out)}")
    rounded = x.to(torch.float32)
    bad = ~torch.isfinite(rounded)
    if bool(bad.any()):
        i, j = bad.nonzero()[0].tolist()
        raise ValueError(
            f"x: expected finite float32 values, got NaN, an infinity or a value beyond float32's range at [{i}, {j}]"
        )
    out.copy_(rounded.reshape(-1))
