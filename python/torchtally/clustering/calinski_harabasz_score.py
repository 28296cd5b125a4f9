"""CalinskiHarabaszScore: the variance ratio criterion of embeddings and their cluster labels,
from per-cluster moments merged with Chan's formula."""

from typing import TYPE_CHECKING, Any, Dict, List, Optional

import torch
from torch import Tensor

from ..base.metric import Metric
from ..functional.clustering.calinski_harabasz_score import (
    block_features,
    ch_from_block,
    check_block,
    fold_moments,
    merge_blocks,
)
from ..functional.clustering.utils import check_intrinsic_shapes

__all__ = ["CalinskiHarabaszScore"]


class CalinskiHarabaszScore(Metric):
    """Calinski-Harabasz score (variance ratio criterion) of embeddings ``data`` [N, D] clustered
    by integer ``labels`` [N] (any values): between-cluster over within-cluster dispersion,
    scikit-learn's calinski_harabasz_score. compute raises ValueError unless
    1 < clusters < samples.

    State: moments float64, "merge": per cluster label one row (label, count, M2, mean [D]),
    8 (D + 4) bytes per cluster, whatever the number of samples (torchmetrics keeps every
    sample: 4 D + 8 bytes each, gathered at each sync); batches and ranks merge by label with
    Chan's formula. Sync: the rows travel in the collection's padded all_gather of float64
    cat/merge states.

    Differences from torchmetrics: sums in float64 (torchmetrics adds in float32); bad input
    (non-float data, float labels, NaN/inf, a D other than the batches before, mismatched
    lengths) raises TypeError / ValueError naming the argument, state unchanged.

    >>> import torch
    >>> from torchtally.clustering import CalinskiHarabaszScore
    >>> data = torch.tensor([[0.0, 0.0], [0.0, 1.0], [4.0, 4.0], [4.0, 5.0]])
    >>> CalinskiHarabaszScore().update(data, torch.tensor([0, 0, 1, 1])).compute()
    tensor(64.)
    """

    is_differentiable = False
    traceable_update = False
    higher_is_better: Optional[bool] = True
    full_state_update = False
    plot_lower_bound: Optional[float] = 0.0
    fresh_compute_results = True

    if TYPE_CHECKING:
        moments: Tensor

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.add_state("moments", torch.zeros(0, dtype=torch.float64), reduce="merge")

    def update(self, data: Tensor, labels: Tensor) -> None:
        """data: [N, D] floating embeddings; labels: [N] integer cluster labels."""
        block = self.moments
        kept = self.__dict__.get("_features_kept")  # (block, its D): read once per block object
        features = kept[1] if kept is not None and kept[0] is block else block_features(block)
        x, lab = check_intrinsic_shapes(data, labels, features)
        block = self.moments = fold_moments(block, x, lab, features)
        self.__dict__["_features_kept"] = (block, block_features(block) if features < 0 else features)

    def merge_state_values(self, name: str, values: List[Tensor]) -> Tensor:
        """Per-cluster moments of several ranks or metrics, merged by label (Chan)."""
        return merge_blocks(values)

    def check_state_invariants(self, states: Dict[str, Tensor]) -> None:
        """The block's layout, counts >= 1, M2 >= 0, labels distinct (see Metric)."""
        super().check_state_invariants(states)
        check_block("moments", states["moments"])

    def compute(self) -> Tensor:
        value = ch_from_block(self.moments)
        return torch.tensor(value, dtype=torch.float64).to(device=self.moments.device, dtype=self.dtype)
