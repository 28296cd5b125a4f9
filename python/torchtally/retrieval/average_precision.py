"""``RetrievalMAP`` (torchmetrics.retrieval.average_precision's names). Mean average precision over
queries."""

from .base import TopK

__all__ = ["RetrievalMAP"]


class RetrievalMAP(TopK):
    """Mean average precision over queries: per query, the mean over its relevant documents in
    the top ``top_k`` of the precision at each one's rank (a relevant document scored <= 0 is not
    retrieved, as torchmetrics). State and differences from torchmetrics: this module's docstring.

        >>> import torch
        >>> from torchtally.retrieval import RetrievalMAP
        >>> indexes = torch.tensor([0, 0, 0, 1, 1, 1, 1])
        >>> preds = torch.tensor([0.2, 0.3, 0.5, 0.1, 0.3, 0.5, 0.2])
        >>> target = torch.tensor([False, False, True, False, True, False, True])
        >>> RetrievalMAP().update(preds, target, indexes=indexes).compute()
        tensor(0.7917)
    """
