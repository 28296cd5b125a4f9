"""DaviesBouldinScore, and the base of the clustering metrics that need every embedding (their
distances to the final centroids): DaviesBouldinScore and DunnIndex.

State (shared by the two in one MetricCollection, ``state_key``):

    data      float32, "cat": the float32, float16 and bfloat16 embeddings, flattened (N D values)
    labels    int64 [N], "cat": their cluster labels
    data64    float64, "cat": the float64 embeddings, flattened
    labels64  int64, "cat": their cluster labels
    features  int64 [0 or 1], "merge": D, once a batch has set it (ranks must agree)

Each embedding is kept exactly, in the narrowest of the two dtypes that holds it: 4 D + 8 bytes
per sample for float32 (and narrower) input, 8 D + 8 for float64 (torchmetrics: the same for
float32 and float64; 2 D + 8 for half precision). Both scores ignore the order of the samples:
compute reads the two groups in place, in two C passes (csrc/API_CLUSTERING.md): the
per-cluster centroids (``cluster_moments``), then every sample's distance to its centroid
(``cluster_distances``), all in float64 arithmetic, with no float64 copy of the embeddings.
Sync: the rows travel in the collection's padded all_gathers of float64 and int64 cat states.
"""

from typing import TYPE_CHECKING, Any, Dict, List, Optional, Tuple

import torch
from torch import Tensor

from ..base.metric import Metric
from ..functional.clustering.davies_bouldin_score import db_from_parts
from ..functional.clustering.utils import all_finite, check_intrinsic_shapes
from ..kernels.image.feature_rows import feature_rows

__all__ = ["DaviesBouldinScore", "EmbeddingMetric"]


class EmbeddingMetric(Metric):
    """Base of DaviesBouldinScore and DunnIndex: every embedding and its label (module docstring).
    ``update(data, labels)``: data [N, D] floating, labels [N] integer (any values)."""

    is_differentiable = False
    traceable_update = False
    full_state_update = False
    fresh_compute_results = True
    state_key = "torchtally.clustering_embeddings"

    if TYPE_CHECKING:
        data: Tensor
        labels: Tensor
        data64: Tensor
        labels64: Tensor
        features: Tensor

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.add_state("data", torch.zeros(0, dtype=torch.float32), reduce="cat")
        self.add_state("labels", torch.zeros(0, dtype=torch.int64), reduce="cat")
        self.add_state("data64", torch.zeros(0, dtype=torch.float64), reduce="cat")
        self.add_state("labels64", torch.zeros(0, dtype=torch.int64), reduce="cat")
        self.add_state("features", torch.zeros(0, dtype=torch.int64), reduce="merge")

    def update(self, data: Tensor, labels: Tensor) -> None:
        """data: [N, D] floating embeddings; labels: [N] integer cluster labels."""
        features = self._features_held()
        x, lab = check_intrinsic_shapes(data, labels, features)
        wide = data.dtype == torch.float64  # checked: a floating dtype; the rest fit float32 exactly
        if x.is_cpu and not wide:  # the finiteness check and the copy in one kernel call
            rows = torch.empty(x.numel(), dtype=torch.float32)
            try:
                feature_rows(rows, x)
            except ValueError:
                raise ValueError("data: expected finite values, got NaN or inf") from None
        elif not all_finite(x):  # in the input's dtype: no float64 copy
            raise ValueError("data: expected finite values, got NaN or inf")
        else:
            rows = x.reshape(-1) if wide or x.dtype == torch.float32 else x.reshape(-1).to(torch.float32)
        if features < 0:
            self.features = torch.tensor([x.shape[1]], dtype=torch.int64, device=self.features.device)
        # Copied where the stored block would be the caller's tensor (a view of it), so no
        # search of the inputs for shared memory is needed.
        fresh = x.is_cpu and not wide
        self.append_state(
            "data64" if wide else "data", rows, copy=not fresh and data.dtype in (torch.float32, torch.float64)
        )
        self.append_state("labels64" if wide else "labels", lab, copy=lab is labels or lab.dtype == labels.dtype)

    def _features_held(self) -> int:
        """D of the data held, -1 before any: read from the "features" state once per state object."""
        state, kept = self.features, self.__dict__.get("_features_kept")
        if kept is None or kept[0] is not state:
            kept = self.__dict__["_features_kept"] = (state, int(state[0]) if state.numel() else -1)
        return kept[1]

    def merge_state_values(self, name: str, values: List[Tensor]) -> Tensor:
        """D of several ranks or metrics: the one those holding data agree on (ValueError if not)."""
        held = {int(v[0]) for v in values if v.numel()}
        if len(held) > 1:
            raise ValueError(
                f"{type(self).__name__}: batches or ranks with different numbers of features {sorted(held)}"
            )
        return next((v.clone() for v in values if v.numel()), values[0].clone())

    def check_state_invariants(self, states: Dict[str, Tensor]) -> None:
        """D >= 0 and D values per label (see Metric)."""
        super().check_state_invariants(states)
        f = states["features"]
        d = int(f[0]) if f.numel() else 0
        for data, labels in (("data", "labels"), ("data64", "labels64")):
            got, count = states[data].numel(), states[labels].numel()
            if f.numel() > 1 or d < 0 or got != d * count:
                raise ValueError(
                    f"'{data}': expected features ({f.tolist()}) times {labels} ({count}) values, got {got}"
                )

    def _parts(self) -> List[Tuple[Tensor, Tensor]]:
        """(data [N, D], labels [N]) of each group, data in its stored dtype (no float64 copy)."""
        d = int(self.features[0]) if self.features.numel() else 0
        return [
            (self.data.reshape(self.labels.numel(), d), self.labels),
            (self.data64.reshape(self.labels64.numel(), d), self.labels64),
        ]

    def _result(self, value: float) -> Tensor:
        return torch.tensor(value, dtype=torch.float64).to(device=self.labels.device, dtype=self.dtype)


class DaviesBouldinScore(EmbeddingMetric):
    """Davies-Bouldin score of embeddings ``data`` [N, D] clustered by integer ``labels`` [N]:
    the mean over clusters of the largest (spread_i + spread_j) / centroid distance;
    scikit-learn's davies_bouldin_score (lower is better). compute raises ValueError unless
    1 < clusters < samples.

    State: every embedding (exact: float32 for float32 and narrower input, 4 D + 8 bytes per sample;
    float64 input 8 D + 8) and its label; sync: the
    collection's padded all_gathers of cat states (torchtally.clustering.davies_bouldin_score).

    Differences from torchmetrics: distances in float64 (torchmetrics: the input's dtype); bad
    input (non-float data, float labels, NaN/inf, a D other than the batches before, mismatched
    lengths) raises TypeError / ValueError naming the argument, state unchanged.
    ``higher_is_better`` is False (torchmetrics says True, but a lower score is a better
    clustering).

    >>> import torch
    >>> from torchtally.clustering import DaviesBouldinScore
    >>> data = torch.tensor([[0.0, 0.0], [0.0, 1.0], [4.0, 4.0], [4.0, 5.0]])
    >>> DaviesBouldinScore().update(data, torch.tensor([0, 0, 1, 1])).compute()
    tensor(0.1768)
    """

    higher_is_better: Optional[bool] = False
    plot_lower_bound: Optional[float] = 0.0

    def compute(self) -> Tensor:
        return self._result(db_from_parts(self._parts()))
