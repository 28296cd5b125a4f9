"""The continuous ranked probability score of an ensemble forecast: input checks and the
per-sample score.

For a sample with M ensemble members x_1..x_M and an observed target y, the CRPS of the
ensemble's empirical distribution is

    mean_i abs(x_i - y)  -  sum_{i,j} abs(x_i - x_j) / (2 M^2)

(torchmetrics' definition), by a C kernel on the CPU (csrc/kernels/crps_scores.c) and torch ops
elsewhere. The pairwise term is read off the sorted members: with x_(k) the
k-th smallest (k = 0..M-1), sum_{i,j} abs(x_i - x_j) = 2 sum_k (2k - M + 1) x_(k), so a batch
costs one sort per sample, O(M log M), never an M x M matrix. Scores are float64; a class sums
them with the sample count ("sum" states), so ranks combine exactly.
"""

import functools
from typing import Optional, Tuple

import torch
from torch import Tensor

from ...kernels import deferred_checks
from ...kernels import regression as kernel
from ...kernels.ops import compiling
from ...kernels.reference.checks import describe
from . import update

_F64 = torch.float64


def ensemble_pair(preds: object, target: object, device: Optional[torch.device] = None) -> Tuple[Tensor, Tensor]:
    """Checked ensemble forecasts [N, M] (M >= 2 members) and targets [N]."""
    p, t = update.real("preds", preds, device), update.real("target", target, device)
    if t.device != p.device:
        raise ValueError(f"target: expected a tensor on {p.device} (the device of preds), got {t.device}")
    if p.dim() != 2:
        raise ValueError(
            f"preds: expected an ensemble forecast of shape [N, M] (M members per sample), got {describe(p)}"
        )
    if p.shape[1] < 2:
        raise ValueError(
            f"preds: expected at least 2 ensemble members (shape [N, M], M >= 2), got {describe(p)} "
            f"(CRPS requires at least 2 ensemble members, but you provided {p.shape})"
        )
    if t.shape != p.shape[:1]:
        raise update.InputShapeError(
            f"target: expected shape [{p.shape[0]}] (one target per row of preds {list(p.shape)}), "
            f"got {list(t.shape)} (Predictions and targets are expected to have the same shape)"
        )
    return p, t


@functools.lru_cache(maxsize=16)
def _rank_weights(m: int, device: torch.device) -> Tensor:
    """(2k - M + 1) / M^2 for k = 0..M-1, float64 (made once per M and device: a small batch's
    update is a dozen tensor calls, three of them these)."""
    return (torch.arange(m, dtype=_F64, device=device) * 2 - (m - 1)) / (m * m)


def _scores(preds: object, target: object, device: Optional[torch.device]) -> Tuple[Tensor, Tensor]:
    """(the CRPS of each sample, float64 [N]; their sum, 0-d) of a checked batch."""
    p, t = ensemble_pair(preds, target, device)
    if p.is_cpu and not compiling() and not deferred_checks.deferring(p):  # the C core: one call, checks included
        scores = torch.empty(p.shape[0], dtype=_F64)
        try:
            kernel.crps_scores(scores, p, t)
        except ValueError:
            update.finite("preds", p)  # the message naming the value
            update.finite("target", t)
            raise
        return scores, scores.sum()
    # elsewhere torch ops: traced inside torch.compile, their finite check kept on the device where deferred
    members = torch.sort(p.to(_F64), dim=1).values
    error = (members - t.to(_F64)[:, None]).abs().mean(1)
    scores = error - (members * _rank_weights(p.shape[1], p.device)).sum(1)
    total = scores.sum()
    update.require_finite(total, p, t)
    return scores, total


def crps_per_sample(preds: object, target: object, device: Optional[torch.device] = None) -> Tensor:
    """The CRPS of each sample (float64 [N]) of a checked batch (see the module docstring)."""
    return _scores(preds, target, device)[0]


def crps_sum(preds: object, target: object, device: Optional[torch.device] = None) -> Tuple[Tensor, int]:
    """(the sum of the samples' CRPS, float64 0-d; the number of samples) of a checked batch."""
    scores, total = _scores(preds, target, device)
    return total, scores.numel()
