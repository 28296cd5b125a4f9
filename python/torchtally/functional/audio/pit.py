"""``permutation_invariant_training`` and ``pit_permutate`` (torchmetrics.functional.audio.pit's
names): a separation metric under the best assignment of predicted to target speakers.

"speaker-wise": ``metric_func`` scores every (prediction, target) speaker pair, a [batch, spk,
spk] matrix; the best permutation maximises (or minimises) the mean over the speakers of the
matched pairs: every permutation is tried for fewer than 3 speakers, scipy's
``linear_sum_assignment`` (an O(spk^3) assignment) from 3 speakers on, as torchmetrics (all
permutations, with a warning, where scipy is not installed). "permutation-wise":
``metric_func`` scores each whole permutation of the predicted speakers against the targets
(for metrics that are not per speaker, e.g. SA-SDR).

``best_perm[b, j]`` is the predicted speaker matched to target speaker j; ``pit_permutate``
reorders the predictions with it. Ties go to the first permutation in lexicographic order. The
mean of the matched scores is taken in the dtype ``metric_func`` returns, as torchmetrics.

Differences from torchmetrics: bad inputs (batch or speaker sizes that differ, fewer than 2
dimensions) raise ValueError naming the argument (torchmetrics: RuntimeError for the sizes).
"""

import functools
import itertools
import warnings
from typing import Any, Callable, Tuple

import numpy as np
import torch
from torch import Tensor

from ...errors import ShapeError

__all__ = ["permutation_invariant_training", "pit_permutate"]

MODES = ("speaker-wise", "permutation-wise")
EVAL_FUNCS = ("max", "min")


@functools.lru_cache(maxsize=64)
def all_permutations(spk: int, device: torch.device) -> Tensor:
    """Every permutation of range(spk), in lexicographic order: int64 [spk!, spk]."""
    return torch.tensor(list(itertools.permutations(range(spk))), dtype=torch.int64, device=device).reshape(-1, spk)


def check_pit_options(metric_func: object, mode: object, eval_func: object) -> None:
    if not callable(metric_func):
        raise TypeError(f"metric_func: expected a callable, got {type(metric_func).__name__}")
    if mode not in MODES:
        raise ValueError(f'mode can only be "speaker-wise" or "permutation-wise" but got {mode!r}')
    if eval_func not in EVAL_FUNCS:
        raise ValueError(f'eval_func can only be "max" or "min" but got {eval_func!r}')


def check_speaker_batch(preds: object, target: object) -> Tuple[Tensor, Tensor]:
    for name, x in (("preds", preds), ("target", target)):
        if not isinstance(x, Tensor):
            raise TypeError(f"{name}: expected a torch.Tensor of shape (batch, spk, ...), got {type(x).__name__}")
        if x.dim() < 2:
            raise ValueError(
                f"{name}: expected a tensor of shape (batch, spk, ...), got shape {list(x.shape)} "
                "(Inputs must be of shape [batch, spk, ...])"
            )
    assert isinstance(preds, Tensor) and isinstance(target, Tensor)
    if preds.shape[:2] != target.shape[:2]:
        raise ShapeError(
            f"target: expected the batch and speaker sizes of preds {list(preds.shape[:2])}, "
            f"got {list(target.shape[:2])} (Predictions and targets are expected to have the same shape at the "
            "batch and speaker dimensions)"
        )
    return preds, target


def best_of(scores: Tensor, eval_func: str) -> Tensor:
    """Index of the best score along dim 1 (the first one on ties)."""
    return scores.argmax(dim=1) if eval_func == "max" else scores.argmin(dim=1)


def pair_matrix(preds: Tensor, target: Tensor, metric_func: Callable[..., Tensor], **kwargs: Any) -> Tensor:
    """[batch, spk (target), spk (prediction)]: metric_func of every speaker pair."""
    spk = target.shape[1]
    rows = [
        torch.stack([metric_func(preds[:, i], target[:, j], **kwargs) for i in range(spk)], dim=-1) for j in range(spk)
    ]
    return torch.stack(rows, dim=1)


def assignment(matrix: Tensor, eval_func: str) -> Tuple[Tensor, Tensor]:
    """Best permutation per row of a [batch, spk, spk] score matrix, and its mean score."""
    batch, spk = matrix.shape[:2]
    if spk >= 3:
        try:
            from scipy.optimize import linear_sum_assignment  # type: ignore[import-untyped]
        except ImportError:
            warnings.warn(
                f"permutation_invariant_training: {spk} speakers are matched by trying all {spk}! permutations; "
                "install scipy for its linear_sum_assignment",
                UserWarning,
                stacklevel=3,
            )
        else:
            scores = matrix.detach().cpu().double().numpy()
            cols = np.zeros((batch, spk), dtype=np.int64)
            for b, m in enumerate(scores):
                cols[b] = linear_sum_assignment(m, maximize=eval_func == "max")[1]
            perm = torch.from_numpy(cols).to(matrix.device)
            return matrix.gather(2, perm.unsqueeze(-1)).mean(dim=(-2, -1)), perm
    perms = all_permutations(spk, matrix.device)  # [P, spk]
    matched = matrix.gather(2, perms.T.unsqueeze(0).expand(batch, spk, perms.shape[0]))  # [batch, spk, P]
    per_perm = matched.mean(dim=1)
    best = best_of(per_perm, eval_func)
    return per_perm.gather(1, best.unsqueeze(1)).squeeze(1), perms[best]


def permutation_invariant_training(
    preds: Tensor,
    target: Tensor,
    metric_func: Callable[..., Tensor],
    mode: str = "speaker-wise",
    eval_func: str = "max",
    **kwargs: Any,
) -> Tuple[Tensor, Tensor]:
    """The best ``metric_func`` value over the speaker permutations of ``preds`` against
    ``target`` (``(batch, spk, ...)``) and the permutation that gives it: ``(best_metric
    [batch], best_perm [batch, spk])``. ``kwargs`` go to ``metric_func``.

        >>> import torch
        >>> from torchtally.functional.audio import permutation_invariant_training
        >>> from torchtally.functional.audio import scale_invariant_signal_distortion_ratio as si_sdr
        >>> target = torch.tensor([[[3.0, -0.5, 2.0, 7.0], [1.0, 2.0, -1.0, 0.5]]])
        >>> best, perm = permutation_invariant_training(target.flip(1) + 0.1, target, si_sdr)
        >>> best, perm
        (tensor([29.4487]), tensor([[1, 0]]))
        >>> pit_permutate(target.flip(1), perm).equal(target)
        True
    """
    check_pit_options(metric_func, mode, eval_func)
    p, t = check_speaker_batch(preds, target)
    batch, spk = t.shape[:2]
    if mode == "speaker-wise":
        return assignment(pair_matrix(p, t, metric_func, **kwargs), eval_func)
    perms = all_permutations(spk, p.device)
    count = perms.shape[0]
    permuted = p[:, perms].reshape(batch * count, *p.shape[1:])
    scores = metric_func(permuted, t.repeat_interleave(count, dim=0), **kwargs)
    per_perm = scores.reshape(batch, count, -1).mean(dim=-1)
    best = best_of(per_perm, eval_func)
    return per_perm.gather(1, best.unsqueeze(1)).squeeze(1), perms[best]


def pit_permutate(preds: Tensor, perm: Tensor) -> Tensor:
    """``preds`` (``(batch, spk, ...)``) with its speakers reordered by ``perm`` (``(batch, spk)``,
    from permutation_invariant_training): ``out[b, j] = preds[b, perm[b, j]]``.

        >>> import torch
        >>> pit_permutate(torch.tensor([[[1.0], [2.0]]]), torch.tensor([[1, 0]]))
        tensor([[[2.],
                 [1.]]])
    """
    if not isinstance(preds, Tensor) or preds.dim() < 2:
        raise ValueError(f"preds: expected a tensor of shape (batch, spk, ...), got {getattr(preds, 'shape', preds)!r}")
    if not isinstance(perm, Tensor) or perm.dtype not in (torch.int64, torch.int32) or perm.shape != preds.shape[:2]:
        raise ValueError(
            f"perm: expected an integer tensor of shape {list(preds.shape[:2])}, got {getattr(perm, 'shape', perm)!r}"
        )
    rows = torch.arange(preds.shape[0], device=preds.device).unsqueeze(1)
    return preds[rows, perm.to(preds.device, torch.int64)]
