"""``retrieval_r_precision`` (torchmetrics.functional.retrieval.r_precision's names). With R
relevant documents, the relevant ones among the top R over R."""

from torch import Tensor

from .average_precision import one_query

__all__ = ["retrieval_r_precision"]


def retrieval_r_precision(preds: Tensor, target: Tensor) -> Tensor:
    """With R relevant documents, the relevant ones among the top R over R; 0 without one.

    >>> import torch
    >>> from torchtally.functional.retrieval import retrieval_r_precision
    >>> retrieval_r_precision(torch.tensor([0.2, 0.3, 0.5]), torch.tensor([True, False, True]))
    tensor(0.5000)
    """
    return one_query(preds, target, "r_precision")
