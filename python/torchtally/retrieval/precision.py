"""``RetrievalPrecision`` (torchmetrics.retrieval.precision's names). Precision at ``top_k``."""

from typing import Any, Optional

from ..functional.retrieval import update as ret_update
from ..functional.retrieval.update import Aggregation
from .base import RetrievalMetric

__all__ = ["RetrievalPrecision"]


class RetrievalPrecision(RetrievalMetric):
    """Precision at ``top_k``: per query, the relevant documents among its top ``top_k`` over
    ``top_k`` (over the query's length where ``top_k`` is None, or ``adaptive_k`` and
    ``top_k`` exceeds it). State and differences from torchmetrics: this module's docstring.

        >>> import torch
        >>> from torchtally.retrieval import RetrievalPrecision
        >>> indexes = torch.tensor([0, 0, 0, 1, 1, 1, 1])
        >>> preds = torch.tensor([0.2, 0.3, 0.5, 0.1, 0.3, 0.5, 0.2])
        >>> target = torch.tensor([False, False, True, False, True, False, True])
        >>> RetrievalPrecision(top_k=2).update(preds, target, indexes=indexes).compute()
        tensor(0.5000)
    """

    _metric = "precision"

    def __init__(
        self,
        empty_target_action: str = "neg",
        ignore_index: Optional[int] = None,
        top_k: Optional[int] = None,
        adaptive_k: bool = False,
        aggregation: Aggregation = "mean",
        **kwargs: Any,
    ) -> None:
        super().__init__(empty_target_action, ignore_index, aggregation, **kwargs)
        self.top_k = ret_update.check_top_k(top_k)
        self.adaptive_k = ret_update.check_flag(adaptive_k, "adaptive_k")
