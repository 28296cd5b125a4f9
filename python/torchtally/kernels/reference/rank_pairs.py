"""Torch reference of the rank-pairs kernel (csrc/API_REGRESSION.md, "rank_pairs").

A batch of (preds, target) as the rank correlations store it: out [N, 2, D] (float32 or
float64) = per sample the rows (preds, target) in out's dtype, every value checked finite in
that dtype (preds first) before `out` is written.
"""

import torch

from . import checks as chk

_REAL = tuple(d for d in chk.LABEL_DTYPES if d != torch.bool) + chk.SCORE_DTYPES


def rank_pairs(out, preds, target, /) -> None:
    chk.no_meta(("preds", preds), ("target", target))
    for name, t in (("preds", preds), ("target", target)):
        t = chk.tensor(name, t)
        if t.dtype not in _REAL:
            chk.fail(name, t, "a floating or integer tensor", False)
        if t.dim() not in (1, 2):
            chk.fail(name, t, "a tensor [N] or [N, D]", True)
    if target.shape != preds.shape:
        chk.fail("target", target, f"the shape of preds {chk.describe(preds)}", True)
    n, d = preds.shape[0], preds.shape[1] if preds.dim() == 2 else 1
    out = chk.tensor("out", out)
    expected = f"a float32 or float64 tensor [{n}, 2, {d}]"
    out = chk.output(
        "out", out, out.dtype if out.dtype in (torch.float32, torch.float64) else torch.float32, expected, (3,)
    )
    if tuple(out.shape) != (n, 2, d):
        chk.fail("out", out, expected, True)
    chk.same_device("preds", preds, out)
    chk.same_device("target", target, out)
    rows = [preds.reshape(n, d).to(out.dtype), target.reshape(n, d).to(out.dtype)]
    for name, v in zip(("preds", "target"), rows):
        i = chk.first(~torch.isfinite(v), None)
        if i is not None:
            raise ValueError(
                f"{name}: expected values finite in the {chk.describe(out).split()[0]} state, "
                f"got {float(v.reshape(-1)[i])} at flat index {i}"
            )
    out[:, 0].copy_(rows[0])
    out[:, 1].copy_(rows[1])
