"""Retrieval curves over queries: per-query AUROC, the precision-recall curve over k and the
recall at a fixed precision. State declarations; the math lives in
torchtally.functional.retrieval.curves (vectorised torch over the documents, grouped and
ordered by the C kernel).

torchmetrics' classes with its constructor signatures, inputs (``update(preds, target,
indexes)``) and values. State: every document, as the other retrieval metrics (query int64,
score float32, relevance bool: 13 bytes per document, "cat" states synced in the one padded
all_gather, shared with them inside a MetricCollection); see torchtally.retrieval.base for
the tie order (documents of equal score ranked least relevant first, so any split across ranks
and batches gives what one process gives) and the deliberate differences from torchmetrics (NaN scores refused, any
integer ``indexes``, an empty batch adds nothing, float64 arithmetic). ``queries_complete`` is
not offered: a curve cannot be kept as a sum of per-query values here (a ValueError).
"""

from typing import Any, Optional, Tuple

import torch
from torch import Tensor

from ..functional.retrieval import compute as ret_compute
from ..functional.retrieval import curves
from ..functional.retrieval import update as ret_update
from ..functional.retrieval.update import Aggregation
from .base import RetrievalMetric

__all__ = ["RetrievalPrecisionRecallCurve", "RetrievalRecallAtFixedPrecision"]


def no_queries_complete(kwargs: dict, owner: str) -> None:
    if kwargs.pop("queries_complete", False):
        raise ValueError(f"queries_complete: {owner} keeps every document (a curve is no sum of per-query values)")


class RetrievalPrecisionRecallCurve(RetrievalMetric):
    """Precision and recall at k = 1..``max_k`` (None: the longest query), aggregated over
    queries: ``(precision [max_k], recall [max_k], top_k [max_k])``. ``adaptive_k``: a query
    shorter than k divides by its length. A query without a positive takes
    ``empty_target_action`` for the whole row (0s, 1s, left out, or a ValueError).

        >>> import torch
        >>> from torchtally.retrieval import RetrievalPrecisionRecallCurve
        >>> indexes = torch.tensor([0, 0, 0, 1, 1, 1, 1])
        >>> preds = torch.tensor([0.2, 0.3, 0.5, 0.1, 0.3, 0.5, 0.2])
        >>> target = torch.tensor([False, False, True, False, True, False, True])
        >>> precision, recall, top_k = RetrievalPrecisionRecallCurve(max_k=3).update(preds, target, indexes).compute()
        >>> precision, recall, top_k
        (tensor([0.5000, 0.5000, 0.5000]), tensor([0.5000, 0.7500, 1.0000]), tensor([1, 2, 3]))
    """

    higher_is_better: Optional[bool] = None

    def __init__(
        self,
        max_k: Optional[int] = None,
        adaptive_k: bool = False,
        empty_target_action: str = "neg",
        ignore_index: Optional[int] = None,
        aggregation: Aggregation = "mean",
        **kwargs: Any,
    ) -> None:
        no_queries_complete(kwargs, type(self).__name__)
        super().__init__(empty_target_action, ignore_index, aggregation, **kwargs)
        self.max_k = ret_update.check_top_k(max_k, "max_k")
        self.adaptive_k = ret_update.check_flag(adaptive_k, "adaptive_k")

    def _curve(self) -> Tuple[Tensor, Tensor, Tensor]:
        precision, recall, empty, ids, k = curves.precision_recall_rows(
            self.query, self.score, self.relevance, self.max_k, self.adaptive_k
        )
        action = self.empty_target_action
        if action == "error":  # raises, naming the first query without a positive
            ret_compute.apply_empty_action(empty.double(), empty, ids, action, type(self).__name__)
        rows = []
        for values in (precision, recall):
            if action == "skip":
                kept = values[~empty]
            else:
                kept = torch.where(empty[:, None], 1.0 if action == "pos" else 0.0, values)
            rows.append(
                curves.aggregate_rows(kept, self.aggregation, self.dtype)
                if kept.shape[0]
                else torch.zeros(k, dtype=self.dtype)
            )
        return rows[0], rows[1], torch.arange(1, k + 1)

    def compute(self) -> Tuple[Tensor, Tensor, Tensor]:  # type: ignore[override]  # a curve
        return self._curve()


class RetrievalRecallAtFixedPrecision(RetrievalPrecisionRecallCurve):
    """The largest recall@k (over k = 1..``max_k``, aggregated over queries as
    RetrievalPrecisionRecallCurve) whose precision@k >= ``min_precision``, and that k:
    ``(recall, k)``; (0, max_k) where there is none.

        >>> import torch
        >>> from torchtally.retrieval import RetrievalRecallAtFixedPrecision
        >>> indexes = torch.tensor([0, 0, 0, 1, 1, 1, 1])
        >>> preds = torch.tensor([0.2, 0.3, 0.5, 0.1, 0.3, 0.5, 0.2])
        >>> target = torch.tensor([False, False, True, False, True, False, True])
        >>> RetrievalRecallAtFixedPrecision(min_precision=0.5, max_k=3).update(preds, target, indexes).compute()
        (tensor(1.), tensor(3))
    """

    higher_is_better = True

    def __init__(
        self,
        min_precision: float = 0.0,
        max_k: Optional[int] = None,
        adaptive_k: bool = False,
        empty_target_action: str = "neg",
        ignore_index: Optional[int] = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(max_k, adaptive_k, empty_target_action, ignore_index, **kwargs)
        if not isinstance(min_precision, float) or not 0.0 <= min_precision <= 1.0:
            raise ValueError(f"min_precision: expected a float in [0, 1], got {min_precision!r}")
        self.min_precision = min_precision

    def compute(self) -> Tuple[Tensor, Tensor]:  # type: ignore[override]  # (recall, k)
        precision, recall, top_k = self._curve()
        return curves.recall_at_fixed_precision(precision, recall, top_k, self.min_precision)
