"""Torch reference of the CRPS kernel (csrc/API_REGRESSION.md, "crps_scores").

out float64 [N] = per sample of preds [N, M] (M >= 2 ensemble members) and target [N] the CRPS
of the members' empirical distribution, mean_k |x_k - y| - sum_k (2k - M + 1) x_(k) / M^2 with
x_(k) the k-th smallest member, in float64: a sort per sample, never an M x M matrix. A NaN or
inf input is a ValueError naming preds (first) or target. Every check runs before `out` is
written.
"""

import torch

from . import checks as chk

F64 = torch.float64
_REAL = tuple(d for d in chk.LABEL_DTYPES if d != torch.bool) + chk.SCORE_DTYPES


def crps_scores(out, preds, target, /) -> None:
    chk.no_meta(("preds", preds), ("target", target))
    for name, t in (("preds", preds), ("target", target)):
        t = chk.tensor(name, t)
        if t.dtype not in _REAL:
            chk.fail(name, t, "a floating or integer tensor", False)
    if preds.dim() != 2 or preds.shape[1] < 2:
        chk.fail("preds", preds, "a tensor [N, M] with M >= 2", True)
    n, m = preds.shape
    if tuple(target.shape) != (n,):
        chk.fail("target", target, f"a tensor [{n}]", True)
    out = chk.output("out", out, F64, f"a float64 tensor [{n}]", (1,))
    if out.shape[0] != n:
        chk.fail("out", out, f"a float64 tensor [{n}]", True)
    chk.same_device("preds", preds, out)
    chk.same_device("target", target, out)
    for name, t in (("preds", preds), ("target", target)):
        if t.is_floating_point():
            i = chk.first(~torch.isfinite(t), None)
            if i is not None:
                raise ValueError(f"{name}: expected finite values, at flat index {i}")
    members = torch.sort(preds.to(F64), dim=1).values
    error = (members - target.to(F64)[:, None]).abs().mean(1)
    weights = (torch.arange(m, dtype=F64, device=out.device) * 2 - (m - 1)) / (m * m)
    out.copy_(error - (members * weights).sum(1))
