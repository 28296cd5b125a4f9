"""DunnIndex: the smallest distance between centroids over the largest distance of a point to
its centroid, from every embedding (the state of torchtally.clustering.davies_bouldin_score)."""

from typing import Any, Optional

from torch import Tensor

from ..functional.clustering.dunn_index import check_p, dunn_from_parts
from .davies_bouldin_score import EmbeddingMetric

__all__ = ["DunnIndex"]


class DunnIndex(EmbeddingMetric):
    """Dunn index of embeddings ``data`` [N, D] clustered by integer ``labels`` [N], distances in
    the ``p``-norm (torchmetrics' centroid form: min distance between two centroids over max
    distance of a point to its own centroid). compute raises ValueError with fewer than 2
    clusters.

    State: every embedding and its label, 4 D + 8 bytes per sample (float32 input; 8 D + 8 for
    float64), shared with
    DaviesBouldinScore in a MetricCollection; sync: the collection's padded all_gathers of cat
    states (torchtally.clustering.davies_bouldin_score).

    Differences from torchmetrics: distances in float64 and the result in ``self.dtype``
    (torchmetrics: the input's dtype); bad input raises naming the argument, state unchanged.

    >>> import torch
    >>> from torchtally.clustering import DunnIndex
    >>> data = torch.tensor([[0.0, 0.0], [0.5, 0.0], [1.0, 0.0], [0.5, 1.0]])
    >>> DunnIndex(p=2).update(data, torch.tensor([0, 0, 0, 1])).compute()
    tensor(2.)
    """

    higher_is_better: Optional[bool] = True
    plot_lower_bound: Optional[float] = 0.0

    def __init__(self, p: float = 2, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.p = check_p(p)

    def compute(self) -> Tensor:
        return self._result(dunn_from_parts(self._parts(), self.p))
