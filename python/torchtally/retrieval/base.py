"""Retrieval metrics over queries: MAP, MRR, NDCG@k, precision@k, recall@k, hit rate@k,
fall-out@k and R-precision. State declarations; the math lives in
torchtally.functional.retrieval (update.py: checks and rows; compute.py: grouping, empty
queries, aggregation) and the C kernel csrc/kernels/retrieval.c.

torchmetrics' classes with its constructor signatures, inputs (``update(preds, target,
indexes)``: scores, relevances and the query id of every document, any shape, flattened) and
values. A query's documents may arrive in several batches and on several ranks.

* State (default): every document as three "cat" states, ``query`` int64, ``score`` float32
  and ``relevance`` (bool for the binary metrics: 8 + 4 + 1 = 13 bytes per document; float32
  for NDCG's graded relevance: 16 bytes), synced in the one padded all_gather of cat states.
  Memory grows with the documents seen, never with the largest query id. Metrics of one
  relevance kind share the states inside a MetricCollection (one copy, one update per batch).
  compute groups the documents by query and scores every query once, in C (O(N log N)).
* ``queries_complete=True``: the caller promises that each query's documents all arrive in one
  update (and in no other). Each batch is then scored at update and only three "sum" states are
  kept (float64 sum of the values of the queries with a positive, their int64 number, the int64
  number of queries without one), synced in one all_reduce. Needs ``aggregation="mean"``
  (a ValueError otherwise); a query split over updates is then counted as two queries, which
  torchtally cannot detect: the promise is the caller's.

Ties: documents of equal score are ranked least relevant first (a constant score never flatters
a model), an order set by the documents alone, so W ranks and any batching give exactly what one
process gives over the whole data set; torchmetrics orders ties by an unstable sort (see
functional/retrieval/compute.py). Without ties, or where a tie holds documents of one relevance
only, the values are torchmetrics'. NDCG and AUROC average over ties.

As torchmetrics 1.9: MAP, MRR, precision and recall count a relevant document scored <= 0 as
not retrieved; fall-out's queries without a negative document (the others': without a
positive) take ``empty_target_action`` ("neg": 0, "pos": 1, "skip": left out, "error": a
ValueError); every query skipped gives 0.

Deliberate differences from torchmetrics:

* errors where it accepts garbage: NaN scores and (NDCG) negative or infinite relevances are a
  ValueError; an integer ``indexes`` of any width is read (torchmetrics: int64 only); an empty
  batch is a ValueError as in torchmetrics, but one whose documents are all ``ignore_index``
  adds nothing (torchmetrics raises);
* exact where it approximates: per-query values and the mean in float64, then the result in
  ``self.dtype`` (torchmetrics: float32 throughout); memory O(documents), not O(max query id);
* results carry no gradient (``is_differentiable`` is False, as torchmetrics).
"""

from typing import TYPE_CHECKING, Any, Dict, Optional, Tuple

import torch
from torch import Tensor

from ..base.metric import Metric
from ..base.state_dict import check_nonnegative
from ..functional.retrieval import compute as ret_compute
from ..functional.retrieval import update as ret_update
from ..functional.retrieval.update import Aggregation

__all__: list = []


class RetrievalMetric(Metric):
    """The documents (or, with ``queries_complete``, the per-query sums) of one retrieval metric."""

    is_differentiable = False
    higher_is_better: Optional[bool] = True
    full_state_update = False
    traceable_update = False  # the relevance checks read values in Python
    plot_lower_bound = 0.0
    plot_upper_bound = 1.0
    _metric = "map"  # the kernel's metric (kernels.retrieval.METRICS)
    _graded = False  # NDCG: relevance float32, any value >= 0
    _missing = "positive"  # what an empty query lacks
    if TYPE_CHECKING:  # states declared with add_state (read as attributes)
        query: Tensor
        score: Tensor
        relevance: Tensor
        value_sum: Tensor
        num_queries: Tensor
        num_empty: Tensor

    def __init__(
        self,
        empty_target_action: str = "neg",
        ignore_index: Optional[int] = None,
        aggregation: Aggregation = "mean",
        *,
        queries_complete: bool = False,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.empty_target_action = ret_update.check_empty_target_action(empty_target_action)
        self.ignore_index = ret_update.check_ignore_index(ignore_index)
        self.aggregation = ret_update.check_aggregation(aggregation)
        self.queries_complete = ret_update.check_queries_complete(queries_complete, aggregation)
        self.top_k: Optional[int] = None
        self.adaptive_k = False
        if self.queries_complete:
            self.add_state("value_sum", torch.tensor(0.0, dtype=torch.float64), reduce="sum")
            self.add_state("num_queries", torch.tensor(0, dtype=torch.int64), reduce="sum")
            self.add_state("num_empty", torch.tensor(0, dtype=torch.int64), reduce="sum")
        else:
            rel = torch.float32 if self._graded else torch.bool
            self.add_state("query", torch.empty(0, dtype=torch.int64), reduce="cat")
            self.add_state("score", torch.empty(0, dtype=torch.float32), reduce="cat")
            self.add_state("relevance", torch.empty(0, dtype=rel), reduce="cat")
            self.state_key = ("retrieval_documents", self._graded, self.ignore_index)

    def update(self, preds: Tensor, target: Tensor, indexes: Tensor) -> None:
        """Add a batch of documents: scores ``preds``, relevances ``target`` and query ids
        ``indexes``, all of one shape."""
        rows = ret_update.document_rows(preds, target, indexes, self.ignore_index, self._graded, self.device)
        if not self.queries_complete:
            for name, block in zip(("query", "score", "relevance"), rows):
                self.append_state(name, block, copy=False)  # made by document_rows: fresh tensors
            return
        values, empty, _ = ret_compute.score_queries(*rows, self._metric, self.top_k, self.adaptive_k)
        total, queries, n_empty = ret_compute.sums_of(values, empty)
        self.value_sum += total
        self.num_queries += queries
        self.num_empty += n_empty

    def _values(self) -> Tuple[Tensor, Tensor, Tensor]:
        return ret_compute.score_queries(
            self.query, self.score, self.relevance, self._metric, self.top_k, self.adaptive_k
        )

    def compute(self) -> Tensor:
        owner = type(self).__name__
        if self.queries_complete:
            mean = ret_compute.mean_from_sums(
                self.value_sum, self.num_queries, self.num_empty, self.empty_target_action, owner, self._missing
            )
            return self.in_result_dtype(mean)
        values, empty, ids = self._values()
        kept = ret_compute.apply_empty_action(values, empty, ids, self.empty_target_action, owner, self._missing)
        return ret_compute.aggregate(kept, self.aggregation, self.dtype)

    def check_state_invariants(self, states: Dict[str, Tensor]) -> None:
        super().check_state_invariants(states)
        check_nonnegative(states, "num_queries", "num_empty")
        if "query" in states and not (states["query"].shape == states["score"].shape == states["relevance"].shape):
            raise ValueError("'query', 'score' and 'relevance': expected one row per document in each")
        score = states.get("score")
        if score is not None and bool(torch.isnan(score).any()):
            raise ValueError("'score': NaN (an update never stores one)")
        rel = states.get("relevance")
        if rel is not None and rel.is_floating_point() and bool((~(rel >= 0) | torch.isinf(rel)).any()):
            raise ValueError("'relevance': expected finite values >= 0")


class TopK(RetrievalMetric):
    """A retrieval metric with torchmetrics' ``top_k`` (None: every document of a query)."""

    def __init__(
        self,
        empty_target_action: str = "neg",
        ignore_index: Optional[int] = None,
        top_k: Optional[int] = None,
        aggregation: Aggregation = "mean",
        **kwargs: Any,
    ) -> None:
        super().__init__(empty_target_action, ignore_index, aggregation, **kwargs)
        self.top_k = ret_update.check_top_k(top_k)
