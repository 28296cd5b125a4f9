"""``RetrievalHitRate`` (torchmetrics.retrieval.hit_rate's names). Hit rate at ``top_k``."""

from .base import TopK

__all__ = ["RetrievalHitRate"]


class RetrievalHitRate(TopK):
    """Hit rate at ``top_k``: per query, 1 if a relevant document is among its top ``top_k``.
    State and differences from torchmetrics: this module's docstring.

        >>> import torch
        >>> from torchtally.retrieval import RetrievalHitRate
        >>> indexes = torch.tensor([0, 0, 0, 1, 1, 1, 1])
        >>> preds = torch.tensor([0.2, 0.3, 0.5, 0.1, 0.3, 0.5, 0.2])
        >>> target = torch.tensor([False, False, True, False, True, False, True])
        >>> RetrievalHitRate(top_k=1).update(preds, target, indexes=indexes).compute()
        tensor(0.5000)
    """

    _metric = "hit_rate"
