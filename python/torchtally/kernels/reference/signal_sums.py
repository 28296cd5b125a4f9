"""Torch reference of the audio signal kernel (csrc/API_AUDIO.md, "signal_sums").

Per row of preds, target [R, T] (float16, bfloat16, float32 or float64, one dtype and shape):
p', t' the row in float64, less its mean when zero_mean; out float64 [R, 3] = (sum t'^2,
sum t' p', sum (p' - t')^2), and with a fourth column (out [R, 4]) the residual sum
(g t' - p')^2 of the gain g = (sum t' p' + eps) / (sum t'^2 + eps) of the row's group of
`group` consecutive rows (the least-squares gain for eps = 0; 0 where the denominator is 0).
Two passes in float64 torch: the centred signals first, then their products (the form the
audio metrics were first written in); the tests' oracle of the C kernel, the route of every
other device, and (``signal_sums_of``) the differentiable form the functional metrics use when
a gradient is wanted. All the checks run before out is written.
"""

import torch
from torch import Tensor

from . import checks as chk


def signal_sums_of(preds: Tensor, target: Tensor, zero_mean: bool, group: int, eps: float, residual: bool) -> Tensor:
    """The kernel's columns [R, 3] (or [R, 4] with ``residual``) as a new float64 tensor that
    carries the inputs' autograd history (no checks: the caller's inputs are valid)."""
    p, t = preds.to(torch.float64), target.to(torch.float64)
    if zero_mean and p.shape[-1] > 0:
        p = p - p.mean(dim=-1, keepdim=True)
        t = t - t.mean(dim=-1, keepdim=True)
    tt, tp = t.square().sum(-1), (t * p).sum(-1)
    columns = [tt, tp, (p - t).square().sum(-1)]
    if residual:
        group_tt = tt.reshape(-1, group).sum(-1)
        group_tp = tp.reshape(-1, group).sum(-1)
        positive = group_tt + eps > 0
        gain = torch.where(positive, (group_tp + eps) / torch.where(positive, group_tt + eps, 1.0), 0.0)
        gain = gain.repeat_interleave(group).unsqueeze(-1)
        columns.append((gain * t - p).square().sum(-1))
    return torch.stack(columns, dim=-1)


def _check(out, preds, target, zero_mean, group, eps):
    chk.no_meta(("out", out), ("preds", preds), ("target", target))
    out = chk.tensor("out", out)
    preds = chk.scores("preds", preds, out, "a floating tensor [R, T]", lambda s: len(s) == 2)
    target = chk.tensor("target", target)
    if target.dtype != preds.dtype or target.shape != preds.shape:
        raise ValueError(
            f"target: expected the dtype and shape of preds ({chk.describe(preds)}), got {chk.describe(target)}"
        )
    chk.same_device("target", target, out)
    out = chk.output("out", out, torch.float64, f"float64 [{preds.shape[0]}, 3 or 4]", (2,))
    if out.shape[0] != preds.shape[0] or out.shape[1] not in (3, 4):
        raise ValueError(f"out: expected float64 [{preds.shape[0]}, 3 or 4], got {chk.describe(out)}")
    group = chk.index_value("group", group, allow_none=False)
    assert group is not None
    if group < 1 or preds.shape[0] % group:
        raise ValueError(f"group: expected a positive divisor of the {preds.shape[0]} rows of preds, got {group}")
    eps = chk.float_value("eps", eps)
    if not 0 <= eps < float("inf"):
        raise ValueError(f"eps: expected a finite number >= 0, got {eps}")
    return out, preds, target, bool(zero_mean), group, eps


def signal_sums(out, preds, target, zero_mean, group, eps, /) -> None:
    """out = the rows' (sum t'^2, sum t' p', sum (p' - t')^2[, projection residual]) in float64."""
    out, preds, target, zero_mean, group, eps = _check(out, preds, target, zero_mean, group, eps)
    out.copy_(signal_sums_of(preds, target, zero_mean, group, eps, out.shape[1] == 4))
