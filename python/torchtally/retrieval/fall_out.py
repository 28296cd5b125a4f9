"""``RetrievalFallOut`` (torchmetrics.retrieval.fall_out's names). Fall-out at ``top_k``."""

from typing import Any, Optional

from ..functional.retrieval.update import Aggregation
from .base import TopK

__all__ = ["RetrievalFallOut"]


class RetrievalFallOut(TopK):
    """Fall-out at ``top_k``: per query, the non-relevant documents among its top ``top_k`` over
    its non-relevant documents (lower is better). A query without a non-relevant document takes
    ``empty_target_action`` (default "pos", as torchmetrics). State and differences from
    torchmetrics: this module's docstring.

        >>> import torch
        >>> from torchtally.retrieval import RetrievalFallOut
        >>> indexes = torch.tensor([0, 0, 0, 1, 1, 1, 1])
        >>> preds = torch.tensor([0.2, 0.3, 0.5, 0.1, 0.3, 0.5, 0.2])
        >>> target = torch.tensor([False, False, True, False, True, False, True])
        >>> RetrievalFallOut(top_k=2).update(preds, target, indexes=indexes).compute()
        tensor(0.5000)
    """

    higher_is_better = False
    _metric = "fall_out"
    _missing = "negative"

    def __init__(
        self,
        empty_target_action: str = "pos",
        ignore_index: Optional[int] = None,
        top_k: Optional[int] = None,
        aggregation: Aggregation = "mean",
        **kwargs: Any,
    ) -> None:
        super().__init__(empty_target_action, ignore_index, top_k, aggregation, **kwargs)
