"""Retrieval: the public per-query curve functions (torchmetrics.functional.retrieval's
retrieval_auroc and retrieval_precision_recall_curve), computed by the classes' code
(curves.py). Inputs are checked as forms.py checks them."""

from typing import Optional, Tuple

import torch
from torch import Tensor

from . import curves, update

__all__ = ["retrieval_auroc", "retrieval_precision_recall_curve"]


def _one_query(preds: Tensor, target: Tensor) -> Tuple[Tensor, Tensor, Tensor]:
    scores, relevance = update.check_scores_and_relevance(preds, target, False)
    if scores.numel() == 0 or preds.dim() == 0:
        raise ValueError(
            "preds: expected a tensor of at least one document "
            "(`preds` and `target` must be non-empty and non-scalar tensors)"
        )
    return torch.zeros(scores.shape[0], dtype=torch.int64), scores.float().cpu(), relevance.bool().cpu()


def retrieval_auroc(
    preds: Tensor, target: Tensor, top_k: Optional[int] = None, max_fpr: Optional[float] = None
) -> Tensor:
    """AUROC of one query's top ``top_k`` documents (ties count half; ``max_fpr``: the
    McClish-standardised partial AUC); 0 where they hold no positive or no negative.

        >>> import torch
        >>> from torchtally.functional.retrieval import retrieval_auroc
        >>> retrieval_auroc(torch.tensor([0.2, 0.3, 0.5, 0.1]), torch.tensor([True, False, True, False]))
        tensor(0.7500)
    """
    top_k = update.check_top_k(top_k or None)  # 0: every document, as torchmetrics
    if max_fpr is not None and (not isinstance(max_fpr, float) or not 0 < max_fpr <= 1):
        raise ValueError(f"max_fpr: expected a float in (0, 1] or None, got {max_fpr!r}")
    values, _, _ = curves.auroc_values(*_one_query(preds, target), top_k, max_fpr)
    return values[0].to(device=preds.device, dtype=torch.float32)


def retrieval_precision_recall_curve(
    preds: Tensor, target: Tensor, max_k: Optional[int] = None, adaptive_k: bool = False
) -> Tuple[Tensor, Tensor, Tensor]:
    """Precision and recall of one query at k = 1..``max_k`` (None: its length), and the k
    (with ``adaptive_k``, a k beyond the query's length n is n, and so is its divisor).

        >>> import torch
        >>> from torchtally.functional.retrieval import retrieval_precision_recall_curve
        >>> retrieval_precision_recall_curve(torch.tensor([0.2, 0.3, 0.5]), torch.tensor([True, False, True]), max_k=2)
        (tensor([1.0000, 0.5000]), tensor([0.5000, 0.5000]), tensor([1, 2]))
    """
    max_k = update.check_top_k(max_k, "max_k")
    adaptive_k = update.check_flag(adaptive_k, "adaptive_k")
    query, scores, relevance = _one_query(preds, target)
    n = scores.shape[0]
    k = max_k if max_k is not None else n
    precision, recall, _, _, _ = curves.precision_recall_rows(query, scores, relevance, k, adaptive_k)
    top_k = torch.arange(1, k + 1)
    if adaptive_k:
        top_k = top_k.clamp(max=n)
    device = preds.device
    return precision[0].to(device, torch.float32), recall[0].to(device, torch.float32), top_k.to(device)
