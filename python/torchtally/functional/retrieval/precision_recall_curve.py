"""``retrieval_precision_recall_curve`` (torchmetrics.functional.retrieval.precision_recall_curve's
names). Precision and recall of one query at k = 1..``max_k`` (None."""

from typing import Optional, Tuple

import torch
from torch import Tensor

from . import curves, update
from .auroc import one_query

__all__ = ["retrieval_precision_recall_curve"]


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
    query, scores, relevance = one_query(preds, target)
    n = scores.shape[0]
    k = max_k if max_k is not None else n
    precision, recall, _, _, _ = curves.precision_recall_rows(query, scores, relevance, k, adaptive_k)
    top_k = torch.arange(1, k + 1)
    if adaptive_k:
        top_k = top_k.clamp(max=n)
    device = preds.device
    return precision[0].to(device, torch.float32), recall[0].to(device, torch.float32), top_k.to(device)
