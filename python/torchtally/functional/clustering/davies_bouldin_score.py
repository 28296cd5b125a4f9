"""``davies_bouldin_score`` (torchmetrics.functional.clustering.davies_bouldin_score's names): the
mean over clusters of the largest ratio (spread_i + spread_j) / distance of centroids i, j, a
cluster's spread being the mean distance of its points to its centroid."""

from typing import Sequence, Tuple

import torch
from torch import Tensor

from .utils import F64, check_cluster_count, check_intrinsic, cluster_statistics, default_dtype

__all__ = ["davies_bouldin_score", "db_from_data", "db_from_parts"]


def db_from_data(x: Tensor, labels: Tensor) -> float:
    """scikit-learn's davies_bouldin_score of checked data and int64 labels."""
    return db_from_parts([(x, labels)])


def db_from_parts(parts: Sequence[Tuple[Tensor, Tensor]]) -> float:
    """scikit-learn's davies_bouldin_score of the samples of every checked (data, labels) part (0
    when every spread or every centroid distance is about 0, numpy's allclose)."""
    sizes, means, distance_sums, _ = cluster_statistics(parts, 2.0)
    check_cluster_count(sizes.numel(), int(sizes.sum()))
    spread = distance_sums / sizes
    between = torch.cdist(means, means)
    zero_spread = torch.allclose(spread, torch.zeros_like(spread))
    if zero_spread or torch.allclose(between, torch.zeros_like(between)):
        return 0.0
    between = torch.where(between == 0, torch.full_like(between, float("inf")), between)
    ratios = (spread.unsqueeze(0) + spread.unsqueeze(1)) / between
    return float(ratios.max(dim=1).values.mean())


def davies_bouldin_score(data: Tensor, labels: Tensor) -> Tensor:
    """Davies-Bouldin score of embeddings ``data`` [N, D] clustered by ``labels`` [N] (lower is
    better).

    >>> import torch
    >>> data = torch.tensor([[0.0, 0.0], [0.0, 1.0], [4.0, 4.0], [4.0, 5.0]])
    >>> davies_bouldin_score(data, torch.tensor([0, 0, 1, 1]))
    tensor(0.1768)
    """
    x, lab = check_intrinsic(data, labels)
    return torch.tensor(db_from_data(x, lab), dtype=F64).to(device=x.device, dtype=default_dtype())
