"""``RetrievalMRR`` (torchmetrics.retrieval.reciprocal_rank's names). Mean reciprocal rank."""

from .base import TopK

__all__ = ["RetrievalMRR"]


class RetrievalMRR(TopK):
    """Mean reciprocal rank: per query, 1 / the rank of its first relevant document in the top
    ``top_k`` (0 without one). State and differences from torchmetrics: this module's docstring.

        >>> import torch
        >>> from torchtally.retrieval import RetrievalMRR
        >>> indexes = torch.tensor([0, 0, 0, 1, 1, 1, 1])
        >>> preds = torch.tensor([0.2, 0.3, 0.5, 0.1, 0.3, 0.5, 0.2])
        >>> target = torch.tensor([False, False, True, False, True, False, True])
        >>> RetrievalMRR().update(preds, target, indexes=indexes).compute()
        tensor(0.7500)
    """

    _metric = "mrr"
