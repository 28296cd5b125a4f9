"""``RetrievalRecall`` (torchmetrics.retrieval.recall's names). Recall at ``top_k``."""

from .base import TopK

__all__ = ["RetrievalRecall"]


class RetrievalRecall(TopK):
    """Recall at ``top_k``: per query, the relevant documents among its top ``top_k`` over its
    relevant documents. State and differences from torchmetrics: this module's docstring.

        >>> import torch
        >>> from torchtally.retrieval import RetrievalRecall
        >>> indexes = torch.tensor([0, 0, 0, 1, 1, 1, 1])
        >>> preds = torch.tensor([0.2, 0.3, 0.5, 0.1, 0.3, 0.5, 0.2])
        >>> target = torch.tensor([False, False, True, False, True, False, True])
        >>> RetrievalRecall(top_k=2).update(preds, target, indexes=indexes).compute()
        tensor(0.7500)
    """

    _metric = "recall"
