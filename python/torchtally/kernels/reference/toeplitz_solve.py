"""Torch reference of the Toeplitz-solve kernel (csrc/API_AUDIO.md, "toeplitz_solve").

out float64 [B, L]: row i solves toeplitz(r[i]) x = b[i], the symmetric Toeplitz matrix whose
first column is r[i] (r, b float64 [B, L], L >= 1); a row whose matrix is not positive definite
(its Cholesky factorisation fails, or NaN on the way) is all NaN. All the checks run before out is
written.
"""

import torch

from . import checks as chk


def _check(out, r, b):
    chk.no_meta(("r", r), ("b", b))
    out = chk.output("out", out, torch.float64, "float64 [B, L]", (2,))
    r = chk.tensor("r", r)
    if r.dtype != torch.float64 or r.dim() != 2 or r.shape[1] < 1:
        raise (TypeError if r.dtype != torch.float64 else ValueError)(
            f"r: expected float64 [B, L] (L >= 1), got {chk.describe(r)}"
        )
    chk.same_device("r", r, out)
    b = chk.tensor("b", b)
    if b.dtype != torch.float64 or b.shape != r.shape:
        raise (TypeError if b.dtype != torch.float64 else ValueError)(
            f"b: expected the dtype and shape of r ({chk.describe(r)}), got {chk.describe(b)}"
        )
    chk.same_device("b", b, out)
    if out.shape != r.shape:
        raise ValueError(f"out: expected float64 {list(r.shape)}, got {chk.describe(out)}")
    return r, b


def toeplitz_solve(out, r, b, /) -> None:
    """out[i] = toeplitz(r[i])^-1 b[i] (NaN rows where the matrix is not positive definite)."""
    r, b = _check(out, r, b)
    if r.shape[0] == 0:
        return
    lags = torch.arange(r.shape[1], device=r.device)
    matrix = r[:, (lags[:, None] - lags[None, :]).abs()]
    factor, info = torch.linalg.cholesky_ex(matrix)
    solution = torch.cholesky_solve(b.unsqueeze(-1), factor).squeeze(-1)
    bad = (info != 0) | ~torch.isfinite(solution).all(-1)
    out.copy_(solution.masked_fill(bad[:, None], float("nan")))
