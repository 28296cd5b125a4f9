"""``retrieval_normalized_dcg`` (torchmetrics.functional.retrieval.ndcg's names). NDCG at ``top_k``
of one query (graded relevance >= 0."""

from typing import Optional

from torch import Tensor

from . import update
from .average_precision import one_query

__all__ = ["retrieval_normalized_dcg"]


def retrieval_normalized_dcg(preds: Tensor, target: Tensor, top_k: Optional[int] = None) -> Tensor:
    """NDCG at ``top_k`` of one query (graded relevance >= 0; documents of equal score share
    their mean gain, as scikit-learn's ndcg_score); 0 where every relevance is 0.

        >>> import torch
        >>> from torchtally.functional.retrieval import retrieval_normalized_dcg
        >>> retrieval_normalized_dcg(torch.tensor([0.1, 0.2, 0.3, 4.0, 70.0]), torch.tensor([10, 0, 0, 1, 5]))
        tensor(0.6957)
    """
    return one_query(preds, target, "ndcg", update.check_top_k(top_k))
