"""Retrieval: the public per-query curve functions (torchmetrics.functional.retrieval's
retrieval_auroc and retrieval_precision_recall_curve), computed by the classes' code
(curves.py). Inputs are checked as average_precision.py checks them."""

from typing import Optional, Tuple

import torch
from torch import Tensor

from . import curves, update

__all__ = ["retrieval_auroc"]


def one_query(preds: Tensor, target: Tensor) -> Tuple[Tensor, Tensor, Tensor]:
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
    values, _, _ = curves.auroc_values(*one_query(preds, target), top_k, max_fpr)
    return values[0].to(device=preds.device, dtype=torch.float32)
