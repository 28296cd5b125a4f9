"""Hinge loss: option checks, the per-batch sums, and the functional forms.

State: a float64 sum of the per-sample losses (per class for multiclass "one-vs-all") and an
int64 sample count; the result is their quotient. Per sample, with probabilities p (see
`score_inputs`: logits get sigmoid / softmax, as torchmetrics):

* binary: max(0, 1 - m)  with m = p for target 1, -p for target 0;
* multiclass "crammer-singer": max(0, 1 - p_y + max_{j != y} p_j);
* multiclass "one-vs-all": per class c, max(0, 1 - m_c) with m_c = p_c if y = c else -p_c;

squared (``squared=True``) before summing. The sums are formed in float64 (torchmetrics sums in
the preds' dtype); a functional form's result has the preds' floating dtype, as torchmetrics'.
"""

from typing import Optional, Tuple

import torch
from torch import Tensor

from ..tasks import check_task, check_task_count
from . import score_inputs
from .update import check_count, check_ignore_index

__all__ = ["binary_hinge_loss", "multiclass_hinge_loss", "hinge_loss"]

MULTICLASS_MODES = ("crammer-singer", "one-vs-all")


def check_squared(squared: object) -> bool:
    if not isinstance(squared, bool):
        raise ValueError(f"squared: expected a bool, got {squared!r}")
    return squared


def check_multiclass_mode(multiclass_mode: object) -> str:
    if multiclass_mode not in MULTICLASS_MODES:
        raise ValueError(f"multiclass_mode: expected one of {MULTICLASS_MODES}, got {multiclass_mode!r}")
    return str(multiclass_mode)


def _losses(margin: Tensor, squared: bool) -> Tensor:
    losses = (1 - margin).clamp(min=0)
    return losses * losses if squared else losses


def binary_hinge_sums(
    preds: object, target: object, squared: bool, ignore_index: Optional[int], device: Optional[torch.device] = None
) -> Tuple[Tensor, int, torch.dtype]:
    """(float64 loss sum, samples, the probabilities' dtype) of one binary batch."""
    p, t = score_inputs.binary_scores(preds, target, ignore_index, device)
    x = p.double()
    return _losses(torch.where(t == 1, x, -x), squared).sum(), int(t.numel()), p.dtype


def multiclass_hinge_sums(
    preds: object,
    target: object,
    num_classes: int,
    squared: bool,
    multiclass_mode: str,
    ignore_index: Optional[int],
    device: Optional[torch.device] = None,
) -> Tuple[Tensor, int, torch.dtype]:
    """(float64 loss sum: 0-d for "crammer-singer", [C] for "one-vs-all"; samples; dtype)."""
    p, t = score_inputs.multiclass_scores(preds, target, num_classes, ignore_index, device)
    x = p.double()
    onehot = torch.nn.functional.one_hot(t, num_classes).bool()
    if multiclass_mode == "crammer-singer":
        own = x.gather(1, t[:, None])[:, 0]
        best_other = x.masked_fill(onehot, float("-inf")).amax(1) if x.shape[0] else own
        total = _losses(own - best_other, squared).sum()
    else:
        total = _losses(torch.where(onehot, x, -x), squared).sum(0)
    return total, int(t.numel()), p.dtype


def hinge_result(total: Tensor, count: Tensor, dtype: torch.dtype) -> Tensor:
    """Mean loss: total / count in `dtype` (NaN over no samples, as torchmetrics' 0 / 0)."""
    return (total / count).to(dtype)


def binary_hinge_loss(
    preds: Tensor,
    target: Tensor,
    squared: bool = False,
    ignore_index: Optional[int] = None,
    validate_args: bool = False,
) -> Tensor:
    """Mean hinge loss of a binary task: preds [N, ...] probabilities or logits, target [N, ...] in {0, 1}.

    >>> import torch
    >>> binary_hinge_loss(torch.tensor([0.25, 0.25, 0.55, 0.75, 0.75]), torch.tensor([0, 0, 1, 1, 1]))
    tensor(0.6900)
    """
    total, n, dtype = binary_hinge_sums(preds, target, check_squared(squared), check_ignore_index(ignore_index))
    return hinge_result(total, torch.tensor(n), dtype)


def multiclass_hinge_loss(
    preds: Tensor,
    target: Tensor,
    num_classes: int,
    squared: bool = False,
    multiclass_mode: str = "crammer-singer",
    ignore_index: Optional[int] = None,
    validate_args: bool = False,
) -> Tensor:
    """Mean hinge loss of a multiclass task: preds [N, C, ...], target [N, ...] class ids; one value
    per class for ``multiclass_mode="one-vs-all"``.

    >>> import torch
    >>> preds = torch.tensor([[0.25, 0.20, 0.55], [0.55, 0.05, 0.40], [0.10, 0.30, 0.60], [0.90, 0.05, 0.05]])
    >>> multiclass_hinge_loss(preds, torch.tensor([0, 1, 2, 0]), num_classes=3)
    tensor(0.9125)
    >>> multiclass_hinge_loss(preds, torch.tensor([0, 1, 2, 0]), num_classes=3, multiclass_mode="one-vs-all")
    tensor([0.8750, 1.1250, 1.1000])
    """
    total, n, dtype = multiclass_hinge_sums(
        preds,
        target,
        check_count("num_classes", num_classes),
        check_squared(squared),
        check_multiclass_mode(multiclass_mode),
        check_ignore_index(ignore_index),
    )
    return hinge_result(total, torch.tensor(n), dtype)


def hinge_loss(
    preds: Tensor,
    target: Tensor,
    task: str,
    num_classes: Optional[int] = None,
    squared: bool = False,
    multiclass_mode: str = "crammer-singer",
    ignore_index: Optional[int] = None,
    validate_args: bool = True,
) -> Tensor:
    """binary_hinge_loss or multiclass_hinge_loss, by ``task`` ("binary" or "multiclass").

    >>> import torch
    >>> hinge_loss(torch.tensor([0.5, 0.7, 0.1]), torch.tensor([0, 1, 1]), task="binary")
    tensor(0.9000)
    """
    task = check_task(task, ("binary", "multiclass"))
    if task == "binary":
        return binary_hinge_loss(preds, target, squared, ignore_index, validate_args)
    n = check_task_count("num_classes", num_classes, task)
    return multiclass_hinge_loss(preds, target, n, squared, multiclass_mode, ignore_index, validate_args)
