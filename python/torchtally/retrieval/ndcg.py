"""``RetrievalNormalizedDCG`` (torchmetrics.retrieval.ndcg's names). Normalized discounted
cumulative gain at ``top_k``."""

from .base import TopK

__all__ = ["RetrievalNormalizedDCG"]


class RetrievalNormalizedDCG(TopK):
    """Normalized discounted cumulative gain at ``top_k``: per query, DCG (gain = relevance,
    discount 1 / log2(rank + 1); documents of equal score share their mean gain, as
    torchmetrics and scikit-learn's ndcg_score) over the ideal DCG. ``target``: graded
    relevance >= 0 (bool, integer or float). State: query int64, score float32, relevance
    float32 (16 bytes per document); see this module's docstring.

        >>> import torch
        >>> from torchtally.retrieval import RetrievalNormalizedDCG
        >>> indexes = torch.tensor([0, 0, 0, 1, 1, 1, 1])
        >>> preds = torch.tensor([0.2, 0.3, 0.5, 0.1, 0.3, 0.5, 0.2])
        >>> target = torch.tensor([False, False, True, False, True, False, True])
        >>> RetrievalNormalizedDCG().update(preds, target, indexes=indexes).compute()
        tensor(0.8467)
    """

    _metric = "ndcg"
    _graded = True
