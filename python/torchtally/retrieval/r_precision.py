"""``RetrievalRPrecision`` (torchmetrics.retrieval.r_precision's names). R-precision."""

from .base import RetrievalMetric

__all__ = ["RetrievalRPrecision"]


class RetrievalRPrecision(RetrievalMetric):
    """R-precision: per query with R relevant documents, the relevant ones among its top R over
    R. State and differences from torchmetrics: this module's docstring.

        >>> import torch
        >>> from torchtally.retrieval import RetrievalRPrecision
        >>> indexes = torch.tensor([0, 0, 0, 1, 1, 1, 1])
        >>> preds = torch.tensor([0.2, 0.3, 0.5, 0.1, 0.3, 0.5, 0.2])
        >>> target = torch.tensor([False, False, True, False, True, False, True])
        >>> RetrievalRPrecision().update(preds, target, indexes=indexes).compute()
        tensor(0.7500)
    """

    _metric = "r_precision"
