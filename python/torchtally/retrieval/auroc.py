"""``RetrievalAUROC`` (torchmetrics.retrieval.auroc's names). Mean over queries of the AUROC of
each query's top ``top_k`` documents (0 for a query whose top k hold no positive or no negative."""

from typing import Any, Optional, Tuple

from torch import Tensor

from ..functional.retrieval import curves
from ..functional.retrieval import update as ret_update
from ..functional.retrieval.update import Aggregation
from .base import RetrievalMetric
from .precision_recall_curve import no_queries_complete

__all__ = ["RetrievalAUROC"]


class RetrievalAUROC(RetrievalMetric):
    """Mean over queries of the AUROC of each query's top ``top_k`` documents (0 for a query
    whose top k hold no positive or no negative; ``max_fpr``: McClish-standardised partial AUC,
    as torchmetrics). Ties in score count half (the exact ROC curve's trapezoidal area). Scores
    are ranked as given: torchmetrics passes scores outside [0, 1] through a float32 sigmoid
    first, which makes logits above about 17 tie (scores [20, 30, 25, -1], relevance
    [0, 1, 1, 0]: 0.75 there, the exact 1.0 here).

        >>> import torch
        >>> from torchtally.retrieval import RetrievalAUROC
        >>> indexes = torch.tensor([0, 0, 0, 1, 1, 1, 1])
        >>> preds = torch.tensor([0.2, 0.3, 0.5, 0.1, 0.3, 0.5, 0.2])
        >>> target = torch.tensor([False, False, True, False, True, False, True])
        >>> RetrievalAUROC().update(preds, target, indexes=indexes).compute()
        tensor(0.7500)
    """

    def __init__(
        self,
        empty_target_action: str = "neg",
        ignore_index: Optional[int] = None,
        top_k: Optional[int] = None,
        max_fpr: Optional[float] = None,
        aggregation: Aggregation = "mean",
        **kwargs: Any,
    ) -> None:
        no_queries_complete(kwargs, "RetrievalAUROC")
        super().__init__(empty_target_action, ignore_index, aggregation, **kwargs)
        self.top_k = ret_update.check_top_k(top_k)
        if max_fpr is not None and (not isinstance(max_fpr, float) or not 0 < max_fpr <= 1):
            raise ValueError(f"max_fpr: expected a float in (0, 1] or None, got {max_fpr!r}")
        self.max_fpr = max_fpr

    def _values(self) -> Tuple[Tensor, Tensor, Tensor]:
        return curves.auroc_values(self.query, self.score, self.relevance, self.top_k, self.max_fpr)
