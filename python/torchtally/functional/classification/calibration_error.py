"""Calibration error: option checks, the per-batch binning, the result from the bins, and the
functional forms.

State: per bin, an int64 count and float64 sums of confidence and accuracy (``counts`` [B] and
``sums`` [B, 2], B = n_bins + 1), filled by the calibration kernel (csrc/API.md). The bins are
torchmetrics': boundaries ``torch.linspace(0, 1, n_bins + 1)`` in the confidences' dtype, a
confidence c in bin b when boundaries[b] <= c < boundaries[b + 1], and c = 1 in a last bin of
its own. Binary confidences are the probabilities and accuracies the targets; multiclass ones
are each sample's highest probability (in float32, as torchmetrics) and whether its class is the
target. Per bin, acc_b and conf_b are the means (0 for an empty bin) and prop_b its share of the
samples: "l1" = sum |acc_b - conf_b| prop_b, "l2" = sqrt(sum (acc_b - conf_b)^2 prop_b), "max" =
max |acc_b - conf_b|. torchmetrics keeps every confidence and bins them at compute; the bins
are the same numbers, exact and fixed in size.
"""

import functools
from typing import Optional, Tuple

import torch
from torch import Tensor

from ... import kernels
from ...kernels.ops import compiling
from ..tasks import check_task, check_task_count
from . import score_inputs
from .update import check_count, check_ignore_index

__all__ = ["binary_calibration_error", "multiclass_calibration_error", "calibration_error"]

NORMS = ("l1", "l2", "max")


def check_n_bins(n_bins: object) -> int:
    if not isinstance(n_bins, int) or isinstance(n_bins, bool) or n_bins < 1:
        raise ValueError(f"n_bins: expected an int >= 1, got {n_bins!r}")
    return n_bins


def check_norm(norm: object) -> str:
    if norm not in NORMS:
        raise ValueError(f"norm: expected one of {NORMS}, got {norm!r}")
    return str(norm)


@functools.lru_cache(maxsize=32)
def _boundaries(n_bins: int, dtype: torch.dtype, device: torch.device) -> Tensor:
    """torchmetrics' bin boundaries in `dtype`, as the float64 values the kernel reads (exact)."""
    return torch.linspace(0, 1, n_bins + 1, dtype=dtype).to(device=device, dtype=torch.float64)


def binary_confidences(
    preds: object, target: object, ignore_index: Optional[int], device: Optional[torch.device] = None
) -> Tuple[Tensor, Tensor]:
    """(confidences [N] in the probabilities' dtype, hits [N]) of one binary batch."""
    return score_inputs.binary_scores(preds, target, ignore_index, device)


def multiclass_confidences(
    preds: object, target: object, num_classes: int, ignore_index: Optional[int], device: Optional[torch.device] = None
) -> Tuple[Tensor, Tensor]:
    """(float32 highest probability [N], whether its class is the target [N]) of one multiclass batch."""
    p, t = score_inputs.multiclass_scores(preds, target, num_classes, ignore_index, device)
    if p.shape[0] == 0:
        return p.new_zeros(0, dtype=torch.float32), t.new_zeros(0, dtype=torch.bool)
    if p.is_cpu and p.dtype in (torch.float32, torch.float64) and not compiling():
        # the C core's row argmax (torch.max's first index on ties) and a gather: a third of
        # torch.max over a short inner dim (scores hold no NaN here: multiclass_scores refused it)
        predicted = torch.empty(p.shape[0], 1, dtype=torch.int64)
        kernels.class_argmax(predicted, p[:, :, None])
        return p.gather(1, predicted).reshape(-1).float(), predicted.reshape(-1) == t
    confidence, predicted = p.max(dim=1)
    return confidence.float(), predicted == t


def calibration_update(counts: Tensor, sums: Tensor, confidences: Tensor, hits: Tensor) -> None:
    """Add a batch's (confidence, hit) pairs to the bins (unchanged on error)."""
    n_bins = counts.shape[0] - 1
    kernels.calibration_update(counts, sums, confidences, hits, _boundaries(n_bins, confidences.dtype, counts.device))


def calibration_from_bins(counts: Tensor, sums: Tensor, norm: str) -> Tensor:
    """The float64 calibration error of the bins (NaN over no samples for "l1" and "l2")."""
    c = counts.double()
    conf = torch.nan_to_num(sums[:, 0] / c)
    acc = torch.nan_to_num(sums[:, 1] / c)
    prop = c / c.sum()
    gap = acc - conf
    if norm == "l1":
        return (gap.abs() * prop).sum()
    if norm == "max":
        return gap.abs().max()
    ce = (gap * gap * prop).sum()
    return ce.sqrt() if bool(ce > 0) else ce.new_zeros(())


def _bins(n_bins: int, device: torch.device) -> Tuple[Tensor, Tensor]:
    b = n_bins + 1
    return torch.zeros(b, dtype=torch.int64, device=device), torch.zeros(b, 2, dtype=torch.float64, device=device)


def _error_of(confidences: Tensor, hits: Tensor, n_bins: int, norm: str) -> Tensor:
    counts, sums = _bins(n_bins, confidences.device)
    calibration_update(counts, sums, confidences, hits)
    return calibration_from_bins(counts, sums, norm).to(confidences.dtype)


def binary_calibration_error(
    preds: Tensor,
    target: Tensor,
    n_bins: int = 15,
    norm: str = "l1",
    ignore_index: Optional[int] = None,
    validate_args: bool = True,
) -> Tensor:
    """Top-label calibration error of a binary task (preds [N, ...] probabilities or logits,
    target [N, ...] in {0, 1}); the result has the probabilities' dtype, as torchmetrics'.

    >>> import torch
    >>> preds = torch.tensor([0.25, 0.25, 0.55, 0.75, 0.75])
    >>> binary_calibration_error(preds, torch.tensor([0, 0, 1, 1, 1]), n_bins=2, norm="l1")
    tensor(0.2900)
    """
    n_bins, norm = check_n_bins(n_bins), check_norm(norm)
    conf, hits = binary_confidences(preds, target, check_ignore_index(ignore_index))
    return _error_of(conf, hits, n_bins, norm)


def multiclass_calibration_error(
    preds: Tensor,
    target: Tensor,
    num_classes: int,
    n_bins: int = 15,
    norm: str = "l1",
    ignore_index: Optional[int] = None,
    validate_args: bool = True,
) -> Tensor:
    """Top-label calibration error of a multiclass task (preds [N, C, ...], target [N, ...]); float32.

    >>> import torch
    >>> preds = torch.tensor([[0.25, 0.20, 0.55], [0.55, 0.05, 0.40], [0.10, 0.30, 0.60], [0.90, 0.05, 0.05]])
    >>> multiclass_calibration_error(preds, torch.tensor([0, 1, 2, 0]), num_classes=3, n_bins=3, norm="l1")
    tensor(0.2000)
    """
    num_classes = check_count("num_classes", num_classes)
    n_bins, norm = check_n_bins(n_bins), check_norm(norm)
    conf, hits = multiclass_confidences(preds, target, num_classes, check_ignore_index(ignore_index))
    return _error_of(conf, hits, n_bins, norm)


def calibration_error(
    preds: Tensor,
    target: Tensor,
    task: str,
    n_bins: int = 15,
    norm: str = "l1",
    num_classes: Optional[int] = None,
    ignore_index: Optional[int] = None,
    validate_args: bool = True,
) -> Tensor:
    """binary_calibration_error or multiclass_calibration_error, by ``task`` ("binary" or "multiclass").

    >>> import torch
    >>> calibration_error(torch.tensor([0.25, 0.75]), torch.tensor([0, 1]), task="binary", n_bins=2)
    tensor(0.2500)
    """
    task = check_task(task, ("binary", "multiclass"))
    if task == "binary":
        return binary_calibration_error(preds, target, n_bins, norm, ignore_index, validate_args)
    n = check_task_count("num_classes", num_classes, task)
    return multiclass_calibration_error(preds, target, n, n_bins, norm, ignore_index, validate_args)
